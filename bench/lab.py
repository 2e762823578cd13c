"""lab.py — the bench scripts' client of a streamlab server they started (stdlib only)."""
import json
import time
import urllib.request


class Lab:
    def __init__(self, port, timeout=600):
        self.base, self.timeout = f"http://127.0.0.1:{port}", timeout

    def call(self, method, path, body=None):
        req = urllib.request.Request(self.base + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=self.timeout) as r:
            return json.load(r)

    def wait_health(self, deadline_s=120):
        """GET /api/health until it answers (the server is starting): its answer."""
        deadline = time.time() + deadline_s
        while True:
            try:
                return self.call("GET", "/api/health")
            except Exception:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
