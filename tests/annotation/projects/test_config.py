"""A project's YAML: Potato's documented configs load unchanged, Potato keys
that do not apply are accepted and reported, anything else unknown is an
error suggesting the nearest key, and every error names its key path."""

from pathlib import Path

import pytest

from annotation.models import Project
from annotation.problems import ProblemsError
from annotation.projects.config import AssignmentConfig, parse_config
from annotation.projects.services import project_config_update, project_create
from tests.factories import ConversationTreeFactory, DatasetFactory, ProjectFactory

SEED_CONFIGS = Path(__file__).resolve().parents[2] / "fixtures" / "potato" / "seed_configs.yaml"
LIKERT = "annotation_schemes:\n  - {annotation_type: likert, name: quality, description: Quality, size: 5}\n"


def seed_configs() -> list[str]:
    return SEED_CONFIGS.read_text().split("\n---\n")


def problems_of(text: str) -> list[str]:
    with pytest.raises(ProblemsError) as error:
        parse_config(text)
    return [str(problem) for problem in error.value.problems]


# -- Potato's documented configs ----------------------------------------------------


def test_all_five_documented_tree_annotation_configs_load_unchanged():
    configs = [parse_config(text) for text in seed_configs()]

    assert [config.schemes[0].name for config in configs] == [
        "response_quality",
        "response_rating",
        "best_path",
        "multi_criteria",
        "branch_compare",
    ]
    assert all(config.ignored == [] and config.notes == [] for config in configs)


def test_the_first_documented_config_rates_nodes_on_a_likert_scale_and_selects_a_path():
    config = parse_config(seed_configs()[0])

    assert config.as_json()["annotation_schemes"] == [
        {
            "annotation_type": "tree_annotation",
            "name": "response_quality",
            "description": "Evaluate the conversation tree",
            "node_scheme": {
                "annotation_type": "likert",
                "name": "node",
                "size": 5,
                "min_label": "Poor",
                "max_label": "Excellent",
            },
            "rates_nodes": True,
            "path_selection": {
                "enabled": True,
                "description": "Select the best response path through the tree",
            },
            "branch_comparison": {"enabled": False, "mode": "pairs", "labels": [], "description": ""},
        }
    ]
    assert (config.id_key, config.tree_key) == ("id", "tree")


def test_the_documented_multirate_node_scheme_keeps_its_options_and_labels():
    node_scheme = parse_config(seed_configs()[3]).as_json()["annotation_schemes"][0]["node_scheme"]

    assert node_scheme == {
        "annotation_type": "multirate",
        "name": "node",
        "options": ["Relevance", "Fluency", "Helpfulness"],
        "labels": ["1", "2", "3", "4", "5"],
    }


def test_the_documented_branch_compare_config_uses_its_radio_labels_for_the_comparisons():
    scheme = parse_config(seed_configs()[4]).as_json()["annotation_schemes"][0]

    assert scheme["rates_nodes"] is False
    assert scheme["branch_comparison"] == {
        "enabled": True,
        "mode": "pairs",
        "labels": ["Better", "Same", "Worse"],
        "description": "",
    }


# -- errors name the key path -------------------------------------------------------


def test_a_node_scheme_error_names_its_full_key_path():
    text = seed_configs()[0].replace("size: 5", "size: 1")

    assert problems_of(text) == ["annotation_schemes[0].node_scheme.size: must be an integer ≥ 2"]


def test_every_problem_is_reported_not_just_the_first():
    text = (
        "annotation_schemes:\n"
        "  - {annotation_type: likert, name: quality, description: Quality, size: 1}\n"
        "  - {annotation_type: radio, name: verdict, description: Verdict, labels: [Agree]}\n"
        "assignment: {lease_minutes: 0}\n"
    )

    assert problems_of(text) == [
        "annotation_schemes[0].size: must be an integer ≥ 2",
        "annotation_schemes[1].labels: needs at least 2 labels",
        "assignment.lease_minutes: must be an integer ≥ 1",
    ]


def test_yaml_that_does_not_parse_is_reported_with_its_line_and_column():
    assert problems_of("annotation_schemes:\n  - {annotation_type: likert\n") == [
        "line 3 column 1: not valid YAML: expected ',' or '}', but got '<stream end>'"
    ]


@pytest.mark.parametrize(
    ("text", "described"),
    [("", "null"), ("- likert\n", "a list"), ("likert\n", "a string")],
)
def test_a_config_must_be_a_mapping(text, described):
    assert problems_of(text) == [f"the configuration must be a mapping of keys, got {described}"]


def test_annotation_schemes_are_required():
    assert problems_of("annotation_task_name: Rating\n") == [
        "annotation_schemes: is required (a list of schemes)"
    ]


@pytest.mark.parametrize(("value", "described"), [("[]", "a list"), ("likert", "a string")])
def test_annotation_schemes_must_be_a_non_empty_list(value, described):
    assert problems_of(f"annotation_schemes: {value}\n") == [
        f"annotation_schemes: must be a non-empty list of schemes, got {described}"
    ]


def test_a_scheme_must_be_a_mapping():
    assert problems_of("annotation_schemes: [likert]\n") == [
        "annotation_schemes[0]: must be a mapping with an annotation_type and a name, got a string"
    ]


def test_a_scheme_needs_an_annotation_type():
    assert problems_of("annotation_schemes:\n  - {name: quality, description: Quality}\n") == [
        "annotation_schemes[0].annotation_type: is required (one of likert, multirate, multiselect, "
        "number, radio, rubric, slider, span, text, tree_annotation)"
    ]


def test_an_unknown_annotation_type_suggests_the_nearest_one():
    assert problems_of(
        "annotation_schemes:\n  - {annotation_type: likret, name: quality, description: Quality}\n"
    ) == [
        'annotation_schemes[0].annotation_type: unknown type "likret" (expected one of likert, multirate, '
        'multiselect, number, radio, rubric, slider, span, text, tree_annotation; did you mean "likert"?)'
    ]


def test_an_annotation_type_that_is_not_a_name_is_an_error_not_a_crash():
    assert problems_of(
        "annotation_schemes:\n  - {annotation_type: [likert], name: quality, description: Quality}\n"
    ) == [
        "annotation_schemes[0].annotation_type: must be the name of a type (one of likert, multirate, "
        "multiselect, number, radio, rubric, slider, span, text, tree_annotation), got a list"
    ]


@pytest.mark.parametrize("name", ["~", "two words", "[quality]", "5"])
def test_a_scheme_needs_a_name_made_of_letters_digits_and_dashes(name):
    # ~ is YAML's null, and YAML reads 5 as a number: neither can name answers.
    text = (
        f"annotation_schemes:\n  - {{annotation_type: likert, size: 5, description: Quality, name: {name}}}\n"
    )

    assert problems_of(text) == [
        "annotation_schemes[0].name: is required: letters, digits, _ and - (it names the answers)"
    ]


def test_labels_that_yaml_reads_as_booleans_are_refused_with_the_way_out():
    text = "annotation_schemes:\n  - {annotation_type: radio, name: verdict, description: Verdict, labels: [yes, no]}\n"

    assert problems_of(text) == [
        "annotation_schemes[0].labels[0]: must be a label name, got a boolean (YAML reads yes/no as one: quote it)",
        "annotation_schemes[0].labels[1]: must be a label name, got a boolean (YAML reads yes/no as one: quote it)",
    ]
    assert parse_config(text.replace("[yes, no]", "['yes', 'no']")).schemes[0].label_names == ["yes", "no"]


def test_label_names_that_yaml_reads_as_booleans_are_refused_in_the_mapping_form_too():
    text = "annotation_schemes:\n  - {annotation_type: radio, name: verdict, description: Verdict, labels: [{name: Yes}, {name: Maybe}]}\n"

    assert problems_of(text) == [
        "annotation_schemes[0].labels[0].name: must be a label name, got a boolean (YAML reads yes/no as one: quote it)"
    ]


def test_two_schemes_cannot_share_a_name():
    text = (
        "annotation_schemes:\n"
        "  - {annotation_type: likert, name: quality, description: Quality, size: 5}\n"
        "  - {annotation_type: text, name: quality, description: Quality}\n"
    )

    assert problems_of(text) == [
        'annotation_schemes[1].name: "quality" is already the name of annotation_schemes[0]'
    ]


def test_label_requirement_must_be_a_mapping_with_a_boolean():
    text = "annotation_schemes:\n  - {annotation_type: likert, name: quality, description: Quality, size: 5, label_requirement: yes}\n"

    assert problems_of(text) == [
        "annotation_schemes[0].label_requirement: must be a mapping like {required: true}"
    ]


def test_label_requirement_marks_a_scheme_required():
    text = (
        "annotation_schemes:\n"
        "  - {annotation_type: likert, name: quality, description: Quality, size: 5, label_requirement: {required: true}}\n"
        "  - {annotation_type: text, name: notes, description: Notes}\n"
    )

    assert [scheme.required for scheme in parse_config(text).schemes] == [True, False]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("annotation_task_name", "[a]", "must be a string, got a list"),
        ("instructions", "5", "must be a string, got a number"),
    ],
)
def test_title_and_instructions_must_be_text(key, value, message):
    assert problems_of(LIKERT + f"{key}: {value}\n") == [f"{key}: {message}"]


# -- keys that do not apply, and unknown keys ---------------------------------------


def test_potato_keys_about_running_potato_are_accepted_and_reported_as_ignored():
    text = (
        LIKERT
        + "port: 8000\noutput_annotation_dir: annotation_output/\ntask_dir: tasks/\n"
        + "data_files: [data/trees.json]\n"
        + "item_properties: {id_key: id, tree_key: tree, text_key: text}\n"
    )

    assert parse_config(text).ignored == [
        "data_files",
        "item_properties.text_key",
        "output_annotation_dir",
        "port",
        "task_dir",
    ]


def test_potato_display_keys_of_a_scheme_are_accepted_and_reported_as_ignored():
    text = (
        "annotation_schemes:\n"
        "  - {annotation_type: likert, name: quality, description: Quality, size: 5, horizontal: true,\n"
        "     sequential_key_binding: true}\n"
    )

    assert parse_config(text).ignored == [
        "annotation_schemes[0].horizontal",
        "annotation_schemes[0].sequential_key_binding",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            LIKERT + "annotation_shemes: []\n",
            'annotation_shemes: unknown key (did you mean "annotation_schemes"?)',
        ),
        (
            LIKERT + "output_annotation_dri: out/\n",
            'output_annotation_dri: unknown key (did you mean "output_annotation_dir"?)',
        ),
        (
            LIKERT + "assignment: {lease_minute: 5}\n",
            'assignment.lease_minute: unknown key (did you mean "lease_minutes"?)',
        ),
        (
            LIKERT + "item_properties: {id_kee: id}\n",
            'item_properties.id_kee: unknown key (did you mean "id_key"?)',
        ),
        (
            "annotation_schemes:\n  - {annotation_type: likert, name: q, description: Q, size: 5, min_lable: Bad}\n",
            'annotation_schemes[0].min_lable: unknown key (did you mean "min_label"?)',
        ),
        (LIKERT + "colour_scheme: dark\n", "colour_scheme: unknown key"),
    ],
)
def test_any_other_unknown_key_is_an_error_suggesting_the_nearest_known_key(text, expected):
    assert problems_of(text) == [expected]


def test_an_unknown_key_in_a_node_scheme_names_its_full_path():
    text = seed_configs()[0].replace("size: 5", "size: 5\n      sise: 7")

    assert problems_of(text) == ['annotation_schemes[0].node_scheme.sise: unknown key (did you mean "size"?)']


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("{id_key: ''}", "item_properties.id_key: must be a non-empty string"),
        ("[id]", "item_properties: must be a mapping, got a list"),
    ],
)
def test_item_properties_are_checked(value, expected):
    assert problems_of(LIKERT + f"item_properties: {value}\n") == [expected]


def test_item_properties_name_the_keys_items_are_read_with():
    config = parse_config(LIKERT + "item_properties: {id_key: conversation_id, tree_key: conversation}\n")

    assert (config.id_key, config.tree_key) == ("conversation_id", "conversation")


# -- assignment ---------------------------------------------------------------------


def test_assignment_defaults_to_one_annotation_per_item_in_sequence_with_hour_long_leases():
    assert parse_config(LIKERT).assignment == AssignmentConfig(
        annotations_per_item=1, max_items_per_user=None, order="sequential", lease_minutes=60, seed=None
    )


@pytest.mark.parametrize("order", ["sequential", "random", "fewest_annotations_first"])
def test_our_assignment_keys_are_read(order):
    text = LIKERT + (
        f"assignment: {{annotations_per_item: 3, max_items_per_user: 20, order: {order}, lease_minutes: 15}}\n"
    )

    assert parse_config(text).assignment == AssignmentConfig(
        annotations_per_item=3, max_items_per_user=20, order=order, lease_minutes=15
    )


def test_a_null_max_items_per_user_means_no_limit():
    assert (
        parse_config(LIKERT + "assignment: {max_items_per_user: null}\n").assignment.max_items_per_user
        is None
    )


def test_potatos_top_level_assignment_keys_are_read_as_ours_and_noted():
    text = LIKERT + (
        "assignment_strategy: least_annotated\nmax_annotations_per_item: 3\nmax_annotations_per_user: 40\n"
    )
    config = parse_config(text)

    assert config.assignment == AssignmentConfig(
        annotations_per_item=3, max_items_per_user=40, order="fewest_annotations_first"
    )
    assert config.notes == [
        'assignment_strategy: read as assignment.order "fewest_annotations_first"',
        "max_annotations_per_item: read as assignment.annotations_per_item 3",
        "max_annotations_per_user: read as assignment.max_items_per_user 40",
    ]


def test_potatos_keys_inside_assignment_are_read_as_ours():
    text = LIKERT + "assignment: {strategy: fixed_order, max_annotations_per_item: 2, random_seed: 7}\n"

    assert parse_config(text).assignment == AssignmentConfig(
        annotations_per_item=2, order="sequential", seed=7
    )


def test_our_assignment_keys_win_over_potatos_top_level_ones():
    text = LIKERT + "assignment_strategy: random\nassignment: {order: sequential}\n"

    assert parse_config(text).assignment.order == "sequential"


def test_order_and_potatos_strategy_cannot_both_be_given():
    assert problems_of(LIKERT + "assignment: {order: random, strategy: random}\n") == [
        "assignment.strategy: give either order or Potato's strategy, not both"
    ]


@pytest.mark.parametrize(("value", "shown"), [("fewest", '"fewest"'), ("3", "a number")])
def test_an_unsupported_order_lists_the_ones_there_are(value, shown):
    assert problems_of(LIKERT + f"assignment: {{order: {value}}}\n") == [
        f"assignment.order: {shown} is not supported (expected sequential, random, "
        "fewest_annotations_first, or Potato's fixed_order, random, least_annotated)"
    ]


@pytest.mark.parametrize("value", ["0", "-2", "'3'", "true", "1.5"])
def test_counts_in_assignment_must_be_positive_integers(value):
    text = LIKERT + (
        f"assignment: {{annotations_per_item: {value}, max_items_per_user: {value}, lease_minutes: {value}}}\n"
    )

    assert problems_of(text) == [
        "assignment.annotations_per_item: must be an integer ≥ 1",
        "assignment.max_items_per_user: must be an integer ≥ 1 (or null for no limit)",
        "assignment.lease_minutes: must be an integer ≥ 1",
    ]


def test_assignment_must_be_a_mapping():
    assert problems_of(LIKERT + "assignment: sequential\n") == ["assignment: must be a mapping, got a string"]


def test_a_random_seed_must_be_an_integer():
    assert problems_of(LIKERT + "assignment: {random_seed: abc}\n") == [
        "assignment.random_seed: must be an integer"
    ]


# -- validated on save --------------------------------------------------------------


@pytest.mark.django_db
def test_a_project_is_created_with_its_config_validated_and_normalised():
    dataset = DatasetFactory()
    ConversationTreeFactory.create_batch(3, dataset=dataset)

    project = project_create(name="ratings", dataset=dataset, config_yaml=seed_configs()[0])

    assert project.config["annotation_schemes"][0]["node_scheme"]["size"] == 5
    assert project.config["assignment"]["order"] == "sequential"
    assert project.items.count() == 3


@pytest.mark.django_db
def test_a_project_with_a_bad_config_is_not_created():
    dataset = DatasetFactory()

    with pytest.raises(ProblemsError) as error:
        project_create(
            name="ratings", dataset=dataset, config_yaml=seed_configs()[0].replace("size: 5", "size: 1")
        )

    assert [str(p) for p in error.value.problems] == [
        "annotation_schemes[0].node_scheme.size: must be an integer ≥ 2"
    ]
    assert not Project.objects.exists()


@pytest.mark.django_db
def test_a_bad_config_update_leaves_the_project_as_it_was():
    project = ProjectFactory(config_yaml=seed_configs()[0])

    with pytest.raises(ProblemsError):
        project_config_update(project=project, config_yaml=LIKERT + "assignment: {order: fewest}\n")

    project.refresh_from_db()
    assert project.config_yaml == seed_configs()[0]
    assert project.config["annotation_schemes"][0]["name"] == "response_quality"


@pytest.mark.django_db
def test_a_config_update_stores_the_new_normalised_config():
    project = ProjectFactory(config_yaml=seed_configs()[0])

    project_config_update(project=project, config_yaml=LIKERT + "assignment: {annotations_per_item: 3}\n")

    project.refresh_from_db()
    assert project.config["annotation_schemes"] == [
        {
            "annotation_type": "likert",
            "name": "quality",
            "description": "Quality",
            "size": 5,
            "min_label": "",
            "max_label": "",
        }
    ]
    assert project.config["assignment"]["annotations_per_item"] == 3
