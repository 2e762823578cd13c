"""Hardening, a NUL in the URL: libmicrohttpd decodes %XX in the path and the query, and a
decoded %00 ends the C string the router sees. GET /api/experiments/%00 was the list (200),
/api/experiments/<id>%00 that experiment, DELETE of it a cancel, ?status=queued%00 the
queued ones. A %00 names nothing: under /api a 404 with the JSON error body, in a query
value a refused value, and nothing changes. (Static paths with %00: the bad-request corpus.)

The requests go over a raw socket, so each path is sent byte for byte."""

import pytest

from conftest import Server, check, expect_status, small
from test_hardening import expect_error_shape, raw_http


@pytest.fixture(scope="module")
def nul_server(tmp_path_factory):
    """An idle server (--workers 0) holding one queued experiment and one sweep."""
    srv = Server(tmp_path_factory.mktemp("nul"), name="nul", workers=0)
    srv.start()
    srv.eid = srv.create(small())["id"]
    srv.sid = expect_status(srv.post("/api/sweeps", {"base": small(), "axes": {"streams": [1, 2]}}), 202)["id"]
    srv.mid = srv.machine_id()
    yield srv
    srv.cleanup()


# Each names, before its %00, something that exists (a list, an experiment, a machine...).
NUL_PATHS = [
    "/api/experiments/%00",
    "/api/experiments/%00{eid}",
    "/api/experiments/{eid}%00",
    "/api/experiments/{eid}/%00",
    "/api/experiments/{eid}%00/timeline",
    "/api/experiments/{eid}/timeline%00",
    "/api/experiments.csv%00",
    "/api/machines/%00",
    "/api/machines/{mid}%00",
    "/api/sweeps/%00",
    "/api/sweeps/{sid}%00",
    "/api/health%00",
]


@pytest.mark.parametrize("template", NUL_PATHS)
def test_nul_in_an_api_path_is_404_with_the_json_error(nul_server, template):
    path = template.format(eid=nul_server.eid, mid=nul_server.mid, sid=nul_server.sid)
    r = raw_http(nul_server.port, "GET", path)
    what = f"GET {path}"
    check(r is not None and r.status == 404, "404 (a %00 names nothing)", r and r.describe(), what)
    err = expect_error_shape(r, what)
    check(err["code"] == "not_found", "error.code not_found", err, what)


def test_delete_with_nul_after_an_id_cancels_nothing(nul_server):
    path = f"/api/experiments/{nul_server.eid}%00"
    r = raw_http(nul_server.port, "DELETE", path)
    check(r is not None and r.status == 404, "404 (a %00 names nothing)", r and r.describe(), f"DELETE {path}")
    expect_error_shape(r, f"DELETE {path}")
    status = nul_server.experiment(nul_server.eid)["status"]
    check(status == "queued", "the experiment still queued", status, f"after DELETE {path}")


def test_nul_in_a_query_value_is_not_cut_off(nul_server):
    path = "/api/experiments?status=queued%00"
    r = raw_http(nul_server.port, "GET", path)
    check(r is not None and r.status == 422, "422 (queued%00 is no status)", r and r.describe(), f"GET {path}")
    err = expect_error_shape(r, f"GET {path}")
    check(err.get("field") == "status", "error.field status", err, f"GET {path}")
