"""A stand-in for every registry a package manager talks to, over HTTPS, for tests/envs/test_host_ca.py.

Runs inside a sandbox (stdlib only, Python 3.8+): `python3 tls_registry.py PORT CERT KEY`. Serves
/token (a fixed body), a PEP 503 index with one wheel, an npm packument, a Cargo sparse index, a Go module
proxy listing and a git repository over git's dumb HTTP protocol, all for a package named `probe`.
"""
import base64
import hashlib
import http.server
import io
import json
import ssl
import sys
import zipfile

TOKEN = "autoinstall-tls-ok"
COMMIT = "1" * 40


def wheel() -> bytes:
    files = {
        "probe/__init__.py": f"TOKEN = {TOKEN!r}\n",
        "probe-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: probe\nVersion: 1.0\n",
        "probe-1.0.dist-info/WHEEL": ("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                      "Tag: py3-none-any\n"),
    }
    record = ""
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record += f"{name},sha256={digest},{len(text.encode())}\n"
    files["probe-1.0.dist-info/RECORD"] = record + "probe-1.0.dist-info/RECORD,,\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return buf.getvalue()


def routes(base: str) -> dict:
    whl = "probe-1.0-py3-none-any.whl"
    index_line = {"name": "probe", "vers": "1.0.0", "deps": [], "cksum": "0" * 64, "features": {},
                  "yanked": False}
    packument = {"name": "probe", "dist-tags": {"latest": "1.0.0"},
                 "versions": {"1.0.0": {"name": "probe", "version": "1.0.0",
                                        "dist": {"tarball": f"{base}/npm/probe/-/probe-1.0.0.tgz"}}}}
    return {
        "/token": ("text/plain", TOKEN.encode()),
        "/simple/probe/": ("text/html", f'<a href="/files/{whl}">{whl}</a>'.encode()),
        f"/files/{whl}": ("application/octet-stream", wheel()),
        "/npm/probe": ("application/json", json.dumps(packument).encode()),
        "/cargo/index/config.json": ("application/json", json.dumps({"dl": f"{base}/cargo/dl"}).encode()),
        "/cargo/index/pr/ob/probe": ("text/plain", json.dumps(index_line).encode() + b"\n"),
        "/go/example.com/probe/@v/list": ("text/plain", b"v1.0.0\n"),
        "/go/example.com/probe/@latest": ("application/json", b'{"Version":"v1.0.0"}'),
        "/go/example.com/probe/@v/v1.0.0.info": ("application/json", b'{"Version":"v1.0.0"}'),
        "/go/example.com/probe/@v/v1.0.0.mod": ("text/plain", b"module example.com/probe\n"),
        "/git/probe.git/info/refs": ("text/plain", f"{COMMIT}\trefs/heads/main\n".encode()),
        "/git/probe.git/HEAD": ("text/plain", b"ref: refs/heads/main\n"),
    }


def main() -> None:
    port, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    table = routes(f"https://localhost:{port}")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_HEAD(self) -> None:  # noqa: N802 (the stdlib's names)
            self.answer(head=True)

        def do_GET(self) -> None:  # noqa: N802
            self.answer(head=False)

        def answer(self, *, head: bool) -> None:
            kind, body = table.get(self.path.split("?")[0], ("text/plain", b""))
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

    class Server(http.server.ThreadingHTTPServer):
        def shutdown_request(self, request: ssl.SSLSocket) -> None:  # type: ignore[override]
            try:  # close_notify: OpenSSL 3 clients (apt) take a bare EOF for a truncated response
                request.unwrap()
            except (OSError, ValueError):
                pass
            super().shutdown_request(request)

    server = Server(("127.0.0.1", port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
