"""Branchpoint from outside, over its API: import a dataset, create a project, annotate,
pull the answers, receive a webhook. Only ``requests`` and the standard library.

Environment: ADMIN_TOKEN (an admin's), ANNOTATOR_TOKEN and ANNOTATOR_NAME (default
"annotator"), BRANCHPOINT_URL (default http://127.0.0.1:8000), HOOK_PORT (default 8765),
PROJECT (default "integration").
"""

import hashlib
import hmac
import json
import os
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

BASE = os.environ.get("BRANCHPOINT_URL", "http://127.0.0.1:8000")
API = BASE + "/" + "api/v1/"
PROJECT = os.environ.get("PROJECT", "integration")
ANNOTATOR_NAME = os.environ.get("ANNOTATOR_NAME", "annotator")
HOOK_PORT = int(os.environ.get("HOOK_PORT", "8765"))
SECRET = "integration-secret-" + os.urandom(8).hex()
CONFIG = """
annotation_schemes:
  - annotation_type: likert
    name: helpful
    description: How helpful is the reply
    size: 5
    min_label: Unhelpful
    max_label: Very helpful
  - {annotation_type: text, name: note, description: A note}
"""
USED = [
    ("post", "/api/v1/datasets"),
    ("post", "/api/v1/datasets/{name}/import"),
    ("post", "/api/v1/projects"),
    ("post", "/api/v1/projects/{name}/members"),
    ("post", "/api/v1/projects/{name}/webhooks"),
    ("post", "/api/v1/projects/{name}/items/next"),
    ("post", "/api/v1/projects/{name}/items/{tree_id}/submit"),
    ("get", "/api/v1/projects/{name}/items/{tree_id}/final"),
    ("put", "/api/v1/projects/{name}/items/{tree_id}/final"),
    ("get", "/api/v1/projects/{name}/export"),
    ("get", "/api/v1/projects/{name}/webhooks/{webhook_id}/deliveries"),
]


def session(token):
    s = requests.Session()
    s.headers["Authorization"] = f"Bearer {token}"
    return s


def call(s, method, path, expect=(200, 201), **kwargs):
    """The answer's JSON; anything else stops the script with the API's error."""
    response = s.request(method, API + path, timeout=30, **kwargs)
    if response.status_code not in expect:
        raise SystemExit(f"{method.upper()} {path}: {response.status_code} {response.text}")
    return response


def verified(secret, body, header, tolerance=300):
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    if not parts.get("t", "").isdigit() or abs(time.time() - int(parts["t"])) > tolerance:
        return False
    expected = hmac.new(secret.encode(), parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts.get("v1", ""))


def webhook_receiver(port):
    """A receiver on 127.0.0.1:port; what it is sent arrives on the queue returned."""
    received = queue.Queue()

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            ok = verified(SECRET, body, self.headers.get("X-Branchpoint-Signature", ""))
            self.send_response(204 if ok else 400)
            self.end_headers()
            if ok:
                received.put(json.loads(body))

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return received


def main():
    admin, annotator = session(os.environ["ADMIN_TOKEN"]), session(os.environ["ANNOTATOR_TOKEN"])

    # 1. The schema has every operation this script calls.
    json_schema = {"Accept": "application/vnd.oai.openapi+json"}
    schema = admin.get(f"{BASE}/api/schema/", headers=json_schema, timeout=30).json()
    missing = [f"{m.upper()} {p}" for m, p in USED if m not in schema["paths"].get(p, {})]
    if missing:
        raise SystemExit(f"the server's API lacks {missing}")
    print(f"schema: {len(USED)} operations used, all there")

    # 2. A dataset of two conversation trees (Potato's format).
    dataset = f"{PROJECT}-trees"
    call(admin, "post", "datasets", json={"name": dataset})
    items = [
        {
            "id": f"{PROJECT}-{n}",
            "tree": {
                "id": "q",
                "role": "user",
                "content": question,
                "children": [{"id": "a", "role": "assistant", "content": answer}],
            },
        }
        for n, (question, answer) in enumerate(
            [("How do I boil an egg?", "Ten minutes in boiling water."), ("Is the sea salty?", "Yes.")]
        )
    ]
    report = call(
        admin, "post", f"datasets/{dataset}/import", json={"format": "potato", "items": items}
    ).json()
    print(f"dataset {dataset}: {report['trees_created']} trees imported")

    # 3. A project over it, an annotator, and a webhook for submissions.
    received = webhook_receiver(HOOK_PORT)
    call(admin, "post", "projects", json={"name": PROJECT, "dataset": dataset, "config_yaml": CONFIG})
    call(admin, "post", f"projects/{PROJECT}/members", json={"username": ANNOTATOR_NAME, "role": "annotator"})
    hook = {"url": f"http://127.0.0.1:{HOOK_PORT}/hook", "secret": SECRET, "events": ["item.submitted"]}
    webhook = call(admin, "post", f"projects/{PROJECT}/webhooks", json=hook).json()
    print(f"project {PROJECT}: annotator added, webhook {webhook['id']} subscribed to item.submitted")

    # 4. The annotator's loop: next item, answer, submit, until nothing is left (404 no_items).
    submitted = []
    while True:
        response = call(annotator, "post", f"projects/{PROJECT}/items/next", expect=(200, 404))
        if response.status_code == 404:
            break
        item = response.json()
        answers = {"helpful": {"rating": 4}, "note": {"text": "Short and right."}}
        body = {"version": item["assignment"]["version"], "annotations": answers}
        call(annotator, "post", f"projects/{PROJECT}/items/{item['tree']['id']}/submit", json=body)
        submitted.append(item["tree"]["id"])
    print(f"annotator submitted {len(submitted)} items")

    # 5. Final answers: with one annotator, adjudicating an item is taking their answer whole
    #    (at the version read); then pull the finals, one JSON record per line.
    for tree_id in submitted:
        final = call(admin, "get", f"projects/{PROJECT}/items/{tree_id}/final").json()
        body = {"version": final["version"], "take": ANNOTATOR_NAME}
        call(admin, "put", f"projects/{PROJECT}/items/{tree_id}/final", json=body)
    export = call(admin, "get", f"projects/{PROJECT}/export", params={"format": "potato", "status": "final"})
    records = [json.loads(line) for line in export.text.splitlines() if line.strip()]
    print(f"finals: {len(records)} records, from {sorted({r['provenance']['helpful'] for r in records})}")

    # 6. The webhook, sent by `manage.py send_webhooks` (its delivery's status, while waiting).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            event = received.get(timeout=1)
            break
        except queue.Empty:
            call(admin, "get", f"projects/{PROJECT}/webhooks/{webhook['id']}/deliveries")
    else:
        raise SystemExit("no webhook within a minute: is `manage.py send_webhooks --loop` running?")
    data = event["data"]
    print(f"webhook: {event['event']} for {data['item']} by {data['annotator']}, signature verified")


if __name__ == "__main__":
    main()
