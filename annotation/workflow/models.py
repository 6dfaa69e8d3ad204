"""Collection workflow models (tasks, reviews, rankings)."""
