"""Models in the loop: endpoints that speak OpenAI-compatible chat completions, and the
work done through them (a Django app of its own, label ``llm``).

Every serving stack speaks the chat-completions protocol (vLLM, llama.cpp's server,
Ollama, TGI, hosted APIs), so one client does for all: the official ``openai`` package,
pointed at the endpoint's base URL.

- ``models``: ``ModelEndpoint`` (where and how to call a model, with its limits and
  prices), ``EndpointPace`` (its next free request slot, shared by every process) and
  ``ModelCall`` (the ledger: one row per request, with its tokens and cost).
- ``keys``: API keys encrypted at rest (never shown again, never logged).
- ``limits``: requests per minute across processes, concurrency within one, and budgets.
- ``client``: one chat request through the limits, into the ledger; errors as values
  that name the endpoint and never hold the key.
- ``services``: endpoints made, changed and deleted (audited), and the connection test.
- ``admin``: endpoints with a write-only key and a "Test connection" action; the ledger.
- ``prompts`` (the judges' built-in prompts, templates and strict answer readers),
  ``judge_questions`` (what a judge is asked about a tree, the annotation it makes),
  ``judging`` (a judge's run over a project), ``writes`` (SQLite's one writer among a
  run's threads), ``tasks`` (the run as a job), ``api`` (judges and their runs under
  /api/v1/), ``admin_judges`` (judges, "Run on a project…", their verdicts).

It sits at the top of the apps (``evaluation`` imports ``annotation`` and ``trees``), as
the work it does — branches grown in trees, judges' answers beside people's, judges
measured against people — needs all three.
"""
