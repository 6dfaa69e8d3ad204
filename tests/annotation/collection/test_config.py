"""The ``workflow:`` section of a project's YAML: Open-Assistant's names and
defaults, every error with its key path, and a tree's limits kept from the
config it was created under."""

import pytest

from annotation.problems import ProblemsError
from annotation.projects.config import parse_config
from annotation.projects.workflow_config import WorkflowConfig, tree_capacity


def problems_of(text: str) -> list[str]:
    with pytest.raises(ProblemsError) as error:
        parse_config(text)
    return [str(problem) for problem in error.value.problems]


def test_an_empty_section_gives_open_assistants_defaults():
    config = parse_config("workflow: {}\n").workflow

    assert config.as_dict() == {
        "max_active_trees": 10,
        "max_initial_prompt_review": 100,
        "max_prompt_lottery_waiting": 250,
        "max_tree_depth": 3,
        "max_children_count": 3,
        "num_prompter_replies": 1,
        "goal_tree_size": 12,
        "random_goal_tree_size": False,
        "min_goal_tree_size": 5,
        "num_reviews_initial_prompt": 3,
        "num_reviews_reply": 3,
        "acceptance_threshold_initial_prompt": 0.6,
        "acceptance_threshold_reply": 0.6,
        "num_required_rankings": 3,
        "rank_prompter_replies": False,
        "lonely_children_count": 2,
        "p_lonely_child_extension": 0.75,
        "p_full_labeling_review_prompt": 1.0,
        "p_full_labeling_review_reply_assistant": 0.5,
        "p_full_labeling_review_reply_prompter": 0.25,
        "p_activate_backlog_tree": 0.1,
        "min_active_rankings_per_lang": 0,
        "max_pending_tasks_per_user": 8,
        "recent_tasks_span_sec": 300,
        "auto_mod_enabled": True,
        "auto_mod_red_flags": 4,
        "auto_mod_max_skip_reply": 25,
        "labels_initial_prompt": [
            "spam", "lang_mismatch", "quality", "creativity", "humor", "toxicity", "violence",
            "not_appropriate", "pii", "hate_speech", "sexual_content",
        ],
        "labels_assistant_reply": [
            "spam", "lang_mismatch", "fails_task", "quality", "helpfulness", "creativity", "humor",
            "toxicity", "violence", "not_appropriate", "pii", "hate_speech", "sexual_content",
        ],
        "labels_prompter_reply": [
            "spam", "lang_mismatch", "quality", "creativity", "humor", "toxicity", "violence",
            "not_appropriate", "pii", "hate_speech", "sexual_content",
        ],
        "mandatory_labels_initial_prompt": ["spam"],
        "mandatory_labels_assistant_reply": ["spam"],
        "mandatory_labels_prompter_reply": ["spam"],
        "default_lang": "en",
        "max_message_chars": 10000,
    }  # fmt: skip
    assert parse_config("workflow: {}\n").as_json()["workflow"] == config.as_dict()


def test_a_collection_project_needs_no_annotation_schemes_but_an_annotation_project_does():
    assert parse_config("workflow: {goal_tree_size: 6}\n").schemes == []
    assert problems_of("instructions: hello\n") == ["annotation_schemes: is required (a list of schemes)"]


def test_settings_override_the_defaults():
    config = parse_config(
        "workflow:\n"
        "  max_children_count: 2\n"
        "  goal_tree_size: 8\n"
        "  random_goal_tree_size: true\n"
        "  min_goal_tree_size: 4\n"
        "  acceptance_threshold_reply: 0.5\n"
        "  labels_prompter_reply: [spam, lang_mismatch, quality]\n"
    ).workflow

    assert (config.max_children_count, config.goal_tree_size, config.min_goal_tree_size) == (2, 8, 4)
    assert config.random_goal_tree_size is True
    assert config.acceptance_threshold_reply == 0.5
    assert config.labels_prompter_reply == ("spam", "lang_mismatch", "quality")
    assert config.max_tree_depth == WorkflowConfig().max_tree_depth


@pytest.mark.parametrize(
    ("section", "problems"),
    [
        ("max_children_count: 0", ["workflow.max_children_count: must be an integer ≥ 1"]),
        ("max_children_count: three", ["workflow.max_children_count: must be an integer ≥ 1"]),
        ("goal_tree_size: true", ["workflow.goal_tree_size: must be an integer ≥ 1"]),
        ("lonely_children_count: -1", ["workflow.lonely_children_count: must be an integer ≥ 0"]),
        (
            "rank_prompter_replies: yes please",
            ["workflow.rank_prompter_replies: must be true or false, got a string"],
        ),
        (
            "p_lonely_child_extension: 1.5",
            ["workflow.p_lonely_child_extension: is a probability: from 0 to 1, got 1.5"],
        ),
        (
            "acceptance_threshold_reply: high",
            ["workflow.acceptance_threshold_reply: must be a number, got a string"],
        ),
        (
            "acceptance_threshold_reply: 2",
            [
                "workflow.acceptance_threshold_reply: must be from -1 to 1 (acceptance scores lie there), got 2"
            ],
        ),
        (
            "max_childen_count: 2",
            ['workflow.max_childen_count: unknown key (did you mean "max_children_count"?)'],
        ),
        (
            "labels_assistant_reply: [spam, qualty]",
            [
                'workflow.labels_assistant_reply[1]: unknown label "qualty" (did you mean "quality"?); expected one of spam, fails_task, lang_mismatch, pii, not_appropriate, hate_speech, sexual_content, moral_judgement, political_content, quality, toxicity, humor, helpfulness, creativity, violence'
            ],
        ),
        (
            "labels_initial_prompt: [spam, spam]",
            ['workflow.labels_initial_prompt[1]: "spam" is listed twice'],
        ),
        (
            "labels_initial_prompt: []",
            ["workflow.labels_initial_prompt: must be a non-empty list of labels, got a list"],
        ),
        (
            "mandatory_labels_assistant_reply: [fails_task]",
            ["workflow.mandatory_labels_assistant_reply: must include spam: acceptance is computed from it"],
        ),
        (
            "labels_prompter_reply: [quality, lang_mismatch]",
            [
                "workflow.labels_prompter_reply: must include the mandatory labels (spam missing, see mandatory_labels_prompter_reply)"
            ],
        ),
        (
            "{random_goal_tree_size: true, min_goal_tree_size: 13}",
            ["workflow.min_goal_tree_size: must not exceed goal_tree_size (12)"],
        ),
        (
            "{goal_tree_size: 20}",
            [
                "workflow.goal_tree_size: 20 messages cannot fit in a tree of depth 3 with at most 3 replies per message (at most 16): its trees would never stop growing"
            ],
        ),
    ],
)
def test_every_problem_names_its_key_path(section, problems):
    if not section.startswith("{"):
        section = "{" + section + "}"
    assert problems_of(f"workflow: {section}\n") == problems


def test_the_section_must_be_a_mapping():
    assert problems_of("workflow: [1, 2]\n") == [
        "workflow: must be a mapping of Open-Assistant's tree-manager settings, got a list"
    ]


@pytest.mark.parametrize(
    ("depth", "children", "prompter_replies", "capacity"),
    [
        (3, 3, 1, 1 + 3 + 3 + 9),  # Open-Assistant's defaults: 16 ≥ goal 12
        (1, 3, 1, 4),
        (2, 2, 2, 1 + 2 + 4),
        (4, 2, 1, 1 + 2 + 2 + 4 + 4),
    ],
)
def test_tree_capacity(depth, children, prompter_replies, capacity):
    assert (
        tree_capacity(max_depth=depth, max_children_count=children, num_prompter_replies=prompter_replies)
        == capacity
    )
