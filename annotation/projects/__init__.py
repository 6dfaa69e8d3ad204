"""Projects and their configuration: creating them over a dataset, their members, their
items, and the YAML that says what is asked and how work is handed out.

- ``config``: a project's YAML (Potato's keys and ours), parsed and cached per text;
  its sections in ``quality_config`` (``quality:``) and ``workflow_config``
  (``workflow:``, Open-Assistant's tree-manager settings, with the ``text_labels``
  they choose among);
- ``services``: creating and changing projects and memberships; items follow the dataset;
- ``usernames``: one account per look-alike family of usernames (``root``, ``Root``, ``r\\u043e\\u043et``);
- ``selectors``: the projects a person may see, with their progress; ``counts``: the
  item counts progress shows, kept briefly per process;
- ``references``: the answers a corpus brings with it (CCPE's spans), made the
  project's reference annotations;
- ``links`` (what other apps add to a project's page) and ``views`` (the project list,
  the shared refusal page).

May import the schemes and annotation's base modules (models, problems, permissions,
recent), and ``trees``.
"""
