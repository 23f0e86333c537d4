"""Serves one directory on 127.0.0.1 (an ephemeral port) for the client tests.

Prints the port on the first line of stdout, then serves until killed.
"""
import functools
import http.server
import sys


def main() -> None:
    root = sys.argv[1]
    handler = functools.partial(Quiet, directory=root)
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        print(server.server_address[1], flush=True)
        server.serve_forever()


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


if __name__ == "__main__":
    main()
