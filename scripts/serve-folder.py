#!/usr/bin/env python3
"""Serves a folder over plain HTTP on loopback, as a release's web server would serve its files.

    scripts/serve-folder.py DIR

Binds 127.0.0.1 on a free port, prints `http://127.0.0.1:<port>` as its first line of stdout
(flushed, so a caller can read it and go on), then serves DIR's files until killed, logging each
request to stderr. Used by the end-to-end scenario that installs the author's tool from a release
(scripts/e2e/95-author-tool-extension.sh) and by scripts/release-install-check.sh.
"""
import functools
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


class Handler(SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("serve-folder: " + fmt % args + "\n")


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: serve-folder.py DIR")
    handler = functools.partial(Handler, directory=sys.argv[1])
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
