"""Python checks of the sample rubrics (registered in settings.BRANCHPOINT_RUBRIC_CHECKS)."""
