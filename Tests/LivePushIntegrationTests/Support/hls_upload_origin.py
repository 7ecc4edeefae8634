"""An HLS origin for the tests: takes PUT (a file, written whole then renamed) and DELETE under
its directory, serves GET from it, and logs every request line on standard output."""
import http.server
import os
import sys


class Origin(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        print("%s %s" % (self.command, self.path), flush=True)

    def _local(self):
        name = self.path.split("?", 1)[0].lstrip("/")
        if ".." in name.split("/"):
            return None
        return os.path.join(self.directory, name)

    def do_PUT(self):
        path = self._local()
        if path is None:
            self.send_error(400)
            return
        length = int(self.headers.get("Content-Length", "0"))
        data = self.rfile.read(length)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".part", "wb") as f:
            f.write(data)
        os.replace(path + ".part", path)
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_DELETE(self):
        path = self._local()
        if path is None or not os.path.exists(path):
            self.send_error(404)
            return
        os.remove(path)
        self.send_response(204)
        self.end_headers()


if __name__ == "__main__":
    directory = sys.argv[1]
    handler = lambda *a, **k: Origin(*a, directory=directory, **k)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    print("Serving HTTP on 127.0.0.1 port %d" % server.server_address[1], flush=True)
    server.serve_forever()
