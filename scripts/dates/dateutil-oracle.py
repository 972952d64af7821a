"""Reads one JSON string per line on stdin and prints, per line, what the real server's Markdown makes of
`<time:...>` with that body: the ISO datetime it writes (UTC, "Z"), or null for its invalid-time error.

It calls python-dateutil the way the real server does (tzinfos = its zone abbreviations, UNIX seconds as the
fallback), with a fixed default day so that results do not depend on when this runs.
Usage: python3 dateutil-oracle.py ZONES_JSON DEFAULT_ISO_DATE < inputs.jsonl
"""
import datetime
import json
import sys
import warnings

import dateutil.parser

warnings.simplefilter("ignore")
zones = json.loads(sys.argv[1])
default = datetime.datetime.fromisoformat(sys.argv[2])
utc = datetime.timezone.utc


def server_reading(body):
    try:
        stamp = dateutil.parser.parse(body, default=default, tzinfos=zones)
    except (ValueError, OverflowError):
        try:
            stamp = datetime.datetime.fromtimestamp(float(body), tz=utc)
        except Exception:  # the server lets OverflowError/OSError escape; either way no time is shown
            return None
    try:
        stamp = stamp.astimezone(utc) if stamp.tzinfo else stamp.replace(tzinfo=utc)
    except (ValueError, OverflowError):
        return None
    return stamp.isoformat().replace("+00:00", "Z")


for line in sys.stdin:
    print(json.dumps(server_reading(json.loads(line))))
