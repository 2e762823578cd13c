"""conftest.py — the crash suite reuses the API suite's harness (tests/api/conftest.py):
the Server class (the real binary on a free loopback port, its own database, stderr
checked for sanitizer reports), the make_server fixture and the pass/fail counting that
run.sh prints. It is loaded under the name api_conftest so that the test files can
import from it."""

import importlib.util
import os
import sys

_API = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api")
_spec = importlib.util.spec_from_file_location("api_conftest", os.path.join(_API, "conftest.py"))
api_conftest = importlib.util.module_from_spec(_spec)
sys.modules["api_conftest"] = api_conftest
_spec.loader.exec_module(api_conftest)

# fixtures and hooks, registered here as this folder's own
_binary = api_conftest._binary
make_server = api_conftest.make_server
_sanitizer_watch = api_conftest._sanitizer_watch
pytest_runtest_logreport = api_conftest.pytest_runtest_logreport
pytest_sessionfinish = api_conftest.pytest_sessionfinish
