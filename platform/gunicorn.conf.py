"""gunicorn settings for Branchpoint: ``gunicorn -c platform/gunicorn.conf.py config.wsgi``.

Workers are stateless (sessions and everything else live in the database),
so more hosts can run this same file behind a load balancer.
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", f"0.0.0.0:{os.environ.get('PORT', '8000')}")
# The annotator's loop is CPU-bound Python with short database waits: one worker per core and
# one more. Sync workers take each request from the shared socket, so a busy worker is never
# handed the next one while another waits (bench/api_load.py on two cores, 30 s: sync 3 workers
# ~130-145 cycles/s, p95 66-82 ms; gthread 3 x 1 ~120/s, p95 120-200 ms, its keep-alive
# connections stay with one worker). GUNICORN_THREADS > 1 switches to gthread workers, for
# deployments with many long exports streaming at once. Behind a buffering proxy (nginx and
# the like), as sync workers should be, slow clients hold no worker.
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count() + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
worker_class = "sync"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))  # large imports and exports stream
graceful_timeout = 30
keepalive = 5
# Workers are forked from a master that has imported Django already: starting one, and the
# restart after max_requests (a guard against slow leaks), costs a fork, not an import.
preload_app = True
max_requests = 5000
max_requests_jitter = 500
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")


def when_ready(server):
    """Load what first requests would (config/warm.py) in the master, before the workers fork
    (GUNICORN_WARM=0 leaves it to each worker's first requests: bench/page_cycle.py --no-warm)."""
    if os.environ.get("GUNICORN_WARM", "1") == "0":
        return
    from config.warm import application_warm

    server.log.info("warmed before forking: %s", application_warm())
