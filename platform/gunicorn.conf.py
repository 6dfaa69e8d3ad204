"""gunicorn settings for Branchpoint: ``gunicorn -c platform/gunicorn.conf.py config.wsgi``.

Workers are stateless (sessions and everything else live in the database),
so more hosts can run this same file behind a load balancer.
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", f"0.0.0.0:{os.environ.get('PORT', '8000')}")
# The annotator's loop is CPU-bound Python with short database waits: one worker per core and
# one more, a thread each, served the most lease+submit cycles on two cores (bench/api_load.py:
# 3 workers x 1 thread ~150/s; x 2 threads ~140/s; 5 x 4 ~130/s). A long export holds its
# worker while it streams: raise GUNICORN_THREADS where many run at once.
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count() + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
worker_class = "gthread"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))  # large imports and exports stream
graceful_timeout = 30
keepalive = 5
max_requests = 2000
max_requests_jitter = 200
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
