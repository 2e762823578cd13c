"""Hardening, static files: content types by extension, ETag with If-None-Match -> 304,
Cache-Control (no-cache on files, no-store on the API), nosniff, HEAD, and 404s that are
HTML outside /api and JSON under /api. Traversal paths are in the bad-request corpus."""

import pytest

from conftest import check, expect_error
from test_hardening import SECRET, make_web, raw_http


@pytest.fixture
def web_server(make_server, tmp_path):
    return make_server(workers=0, web=make_web(tmp_path / "site"))


@pytest.mark.parametrize("path,ctype,text", [
    ("/", "text/html; charset=utf-8", "streamlab-test-index"),
    ("/index.html", "text/html; charset=utf-8", "streamlab-test-index"),
    ("/app.js", "text/javascript; charset=utf-8", "answer = 42"),
    ("/style.css", "text/css; charset=utf-8", "margin"),
    ("/logo.svg", "image/svg+xml", "<svg"),
    ("/sub/data.json", "application/json; charset=utf-8", '"a"'),
    ("/data.bin", "application/octet-stream", None),
])
def test_static_file_content_type_and_caching_headers(web_server, path, ctype, text):
    r = raw_http(web_server.port, "GET", path)
    check(r is not None and r.status == 200, 200, r and r.describe(), f"GET {path}")
    check(r.header("content-type") == ctype, ctype, r.header("content-type"), f"Content-Type of {path}")
    if text:
        check(text in r.body.decode("utf-8", "replace"), f"a body with {text!r}", r.body[:200], f"body of {path}")
    check(bool(r.header("etag")), "an ETag", r.headers, f"ETag of {path}")
    check(r.header("cache-control") == "no-cache", "Cache-Control: no-cache (revalidate with the ETag)",
          r.header("cache-control"), f"Cache-Control of {path}")
    check(r.header("x-content-type-options") == "nosniff", "X-Content-Type-Options: nosniff",
          r.header("x-content-type-options"), f"nosniff on {path}")


def test_etag_if_none_match_gives_304_and_a_changed_file_a_new_etag(web_server, tmp_path):
    r = raw_http(web_server.port, "GET", "/app.js")
    etag = r.header("etag")
    r2 = raw_http(web_server.port, "GET", "/app.js", {"If-None-Match": etag})
    check(r2.status == 304, 304, r2.describe(), "GET /app.js with If-None-Match: its ETag")
    check(r2.body == b"", "no body on a 304", r2.body[:100], "304 body")
    check(r2.header("etag") == etag, etag, r2.header("etag"), "ETag on the 304")
    r3 = raw_http(web_server.port, "GET", "/app.js", {"If-None-Match": '"something-else"'})
    check(r3.status == 200 and r3.body == r.body, "200 with the file for another ETag", r3.describe(),
          "GET /app.js with a stale If-None-Match")
    (tmp_path / "site" / "web" / "app.js").write_text("export const answer = 43; // longer now\n")
    r4 = raw_http(web_server.port, "GET", "/app.js", {"If-None-Match": etag})
    check(r4.status == 200 and b"43" in r4.body, "200 with the new content after the file changed", r4.describe(),
          "GET /app.js with the old ETag after a change")
    check(r4.header("etag") != etag, "a new ETag", r4.header("etag"), "ETag after a change")


def test_head_gives_headers_without_a_body(web_server):
    r = raw_http(web_server.port, "HEAD", "/index.html")
    check(r is not None and r.status == 200, 200, r and r.describe(), "HEAD /index.html")
    check(r.header("content-type") == "text/html; charset=utf-8", "text/html", r.header("content-type"),
          "Content-Type of HEAD /index.html")


@pytest.mark.parametrize("path", ["/nope.html", "/sub/nope.js", "/nope", "/sub/", "/escape.txt", "/up/secret.txt"])
def test_404_outside_api_is_html(web_server, path):
    r = raw_http(web_server.port, "GET", path)
    check(r is not None and r.status == 404, 404, r and r.describe(), f"GET {path}")
    check((r.header("content-type") or "").startswith("text/html"), "text/html", r.header("content-type"),
          f"404 content type of {path}")
    check(SECRET.encode() not in r.body, "not the file outside web/", r.body[:200], f"GET {path}")


@pytest.mark.parametrize("path", ["/api/nope", "/api/experiments/e-nope", "/api/experiments/e-nope/timeline",
                                  "/api/machines/m-nope", "/api/sweeps/s-nope", "/api/nope/deeper/still"])
def test_404_under_api_is_json(web_server, path):
    r = web_server.get(path)
    err = expect_error(r, 404)
    check(err["code"] == "not_found", "not_found", err["code"], f"error code of GET {path}")
    check(r.headers.get("Cache-Control") == "no-store", "Cache-Control: no-store on the API",
          r.headers.get("Cache-Control"), f"GET {path}")


def test_api_answers_are_not_cached(web_server):
    for path in ("/api/health", "/api/experiments", "/api/machines"):
        r = web_server.get(path)
        check(r.headers.get("Cache-Control") == "no-store", "no-store", r.headers.get("Cache-Control"), f"GET {path}")
