#!/usr/bin/env python3
"""Prints what an Azurite holds, read through its own REST API, as JSON:
{"containers": [...], "queues": [...], "tables": [...]} (each sorted).

    scripts/e2e/azurite-list.py BLOB_PORT QUEUE_PORT TABLE_PORT

Signs each list request with Azurite's published account key (Shared Key), independently of
the azure-storage provider's own code. Used by scripts/azd-e2e.sh after each azd step."""
import base64
import hashlib
import hmac
import json
import re
import sys
import urllib.request
from email.utils import formatdate

ACCOUNT = "devstoreaccount1"
KEY = base64.b64decode(
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
VERSION = "2021-12-02"


def get(port, path, query, table):
    date = formatdate(usegmt=True)
    url_path = f"/{ACCOUNT}{path}"
    if table:
        to_sign = f"GET\n\n\n{date}\n/{ACCOUNT}{url_path}"
    else:
        params = "".join(f"\n{k}:{v}" for k, v in sorted(query.items()))
        to_sign = "GET\n" + "\n" * 11 + f"x-ms-date:{date}\nx-ms-version:{VERSION}\n/{ACCOUNT}{url_path}{params}"
    signature = base64.b64encode(hmac.new(KEY, to_sign.encode(), hashlib.sha256).digest()).decode()
    qs = "&".join(f"{k}={v}" for k, v in query.items())
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{url_path}" + (f"?{qs}" if qs else ""),
        headers={
            "x-ms-date": date,
            "x-ms-version": VERSION,
            "Accept": "application/json;odata=nometadata",
            "Authorization": f"SharedKey {ACCOUNT}:{signature}",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read().decode()


def main():
    blob, queue, table = sys.argv[1:4]
    names = lambda xml: sorted(re.findall(r"<Name>([^<]*)</Name>", xml))
    tables = json.loads(get(table, "/Tables", {}, True))["value"]
    print(json.dumps({
        "containers": names(get(blob, "", {"comp": "list"}, False)),
        "queues": names(get(queue, "", {"comp": "list"}, False)),
        "tables": sorted(t["TableName"] for t in tables),
    }, sort_keys=True))


main()
