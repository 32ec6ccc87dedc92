"""A tiny MCP memory server on stdio for the mcp adapter's fault tests: raw JSON-RPC lines, no SDK.

``python fake_mcp_server.py MODE [PIDFILE]``.  It offers ``remember`` (keeps a text with its entry id) and
``recall`` (the kept texts containing the query, case-insensitive, with ``sources`` and a score), except where
the mode breaks it:

* ``ok``: as described;
* ``crash``: writes a line to stderr and exits 3 before reading anything;
* ``no-tools``: offers only ``remember``;
* ``exit-on-recall``: exits when ``recall`` is called (a server dying mid-run);
* ``malformed``: answers ``recall`` with a line that is not JSON;
* ``hang``: never answers ``recall``;
* ``child``: as ``ok``, and first starts a child process that sleeps (a server with a process tree);
* ``text``: answers in plain text only, as many real servers do: ``remember`` with ``Saved: <text>`` and
  ``recall`` with a header line ``Found N memories:`` and one line ``[<id>] <score> <text>`` per hit (no
  structured content, no JSON);
* ``tool-error``: answers ``recall`` with a tool error whose text names this machine's folders: the
  ``WORKDIR`` of its environment (the scope's workdir, through the profile's ``env``), the current folder,
  the home folder and the temporary folder.

With ``PIDFILE`` it appends its own pid there (and its child's, one a line), so a test can check that none
is left running, of every server a run started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

MODE = sys.argv[1]
PIDFILE = sys.argv[2] if len(sys.argv) > 2 else None
TOOLS = [
    {"name": "remember", "inputSchema": {"type": "object"}},
    {"name": "recall", "inputSchema": {"type": "object"}},
]
kept: list[dict[str, str]] = []


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(ident: object, value: dict) -> None:
    send({"jsonrpc": "2.0", "id": ident, "result": value})


def main() -> None:
    pids = []
    if MODE == "child":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pids.append(child.pid)
    if PIDFILE:
        with open(PIDFILE, "a", encoding="utf-8") as out:
            out.write("\n".join(str(p) for p in [os.getpid(), *pids]) + "\n")
    if MODE == "crash":
        sys.stderr.write("fake server: cannot open its database\n")
        sys.exit(3)
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if ident is None:  # a notification
            continue
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            result(
                ident,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake", "version": "1.0"},
                },
            )
        elif method == "tools/list":
            result(ident, {"tools": TOOLS[:1] if MODE == "no-tools" else TOOLS})
        elif method == "tools/call":
            name, args = message["params"]["name"], message["params"].get("arguments") or {}
            if name == "remember":
                kept.append({"text": args["text"], "entry": args["entry"]})
                if MODE == "text":
                    result(ident, {"content": [{"type": "text", "text": f"Saved: {args['text']}"}]})
                    continue
                result(ident, {"content": [{"type": "text", "text": "ok"}], "structuredContent": {"kept": len(kept)}})
            elif name == "recall":
                if MODE == "exit-on-recall":
                    sys.exit(0)
                if MODE == "malformed":
                    sys.stdout.write("{this is not json\n")
                    sys.stdout.flush()
                    continue
                if MODE == "hang":
                    time.sleep(600)
                if MODE == "tool-error":
                    where = os.environ.get("WORKDIR", "?")
                    text = (
                        f"no index at {where}/index.db (cwd {os.getcwd()}, cache "
                        f"{os.path.expanduser('~')}/.cache, scratch {tempfile.gettempdir()}/scratch)"
                    )
                    result(ident, {"content": [{"type": "text", "text": text}], "isError": True})
                    continue
                query = args["query"].lower()
                hits = [
                    {"text": k["text"], "id": f"m{i}", "score": 1.0 / (1 + i), "sources": [k["entry"]]}
                    for i, k in enumerate(kept)
                    if query in k["text"].lower()
                ]
                if MODE == "text":
                    lines = [f"Found {len(hits)} memories:"] + [
                        f"[{h['id']}] {h['score']:.2f} {h['text']}" for h in hits
                    ]
                    result(ident, {"content": [{"type": "text", "text": "\n".join(lines)}]})
                    continue
                result(
                    ident,
                    {"content": [{"type": "text", "text": json.dumps(hits)}], "structuredContent": {"hits": hits}},
                )
            else:
                send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32602, "message": f"Tool {name} not found"}})
        else:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
