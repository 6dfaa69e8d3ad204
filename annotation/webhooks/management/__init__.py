"""The webhooks app's commands."""
