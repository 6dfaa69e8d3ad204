// The admin's jobs page: each unfinished job's progress bar, state and rate, kept up to date
// by polling its API (GET /api/v1/jobs/{id}) until the job is done, failed or cancelled.

const FINISHED = new Set(["done", "failed", "cancelled"]);
const EVERY_MS = 1000;

function perSecond(job) {
  if (job.rate === null) return "";
  if (job.unit === "bytes") return `${(job.rate / 1024 / 1024).toFixed(1)} MB/s`;
  return `${Math.round(job.rate).toLocaleString()} ${job.unit}/s`;
}

function show(holder, job) {
  const bar = holder.querySelector("progress");
  const finished = FINISHED.has(job.state);
  bar.max = job.total || 1;
  bar.value = job.total ? job.done : finished ? 1 : 0;
  bar.textContent = `${job.done.toLocaleString()} of ${job.total.toLocaleString()}`;
  holder.dataset.state = job.state;
  holder.querySelector(".job-state").textContent = job.state;
  holder.querySelector(".job-rate").textContent = perSecond(job);
  const message = document.querySelector(`.job-message[data-job-id="${job.id}"]`);
  if (message && job.message) message.textContent = job.message;
  if (finished) {
    const row = holder.closest("tr");
    const cancel = row ? row.querySelector(".job-cancel") : null;
    if (cancel) cancel.remove();
  }
  return finished;
}

async function follow(holder) {
  while (!FINISHED.has(holder.dataset.state)) {
    await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
    try {
      const response = await fetch(holder.dataset.jobUrl, { headers: { Accept: "application/json" } });
      // Gone, or no longer ours to see: stop. A busy or restarting server: try again.
      if (response.status === 403 || response.status === 404) return;
      if (response.ok && show(holder, await response.json())) return;
    } catch {
      // The network dropped: try again on the next tick.
    }
  }
}

for (const holder of document.querySelectorAll(".job-progress[data-job-url]")) {
  follow(holder);
}
