"""Overlap of file patterns is decided on the patterns: a matrix of pairs people write, and hypothesis
checking both directions against an independent matcher (a shared path found is real; a path both
cover is always found)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooms_cli.core.errors import InvalidInput
from rooms_cli.reservations.patterns import covers, normalize, overlap


@pytest.mark.parametrize("first, second, overlapping", [
    ("src/**", "src/a.py", True),
    ("src/**", "src/deep/er/a.py", True),
    ("src/**", "docs/a.py", False),
    ("*.md", "docs/x.md", True),  # no slash: any depth, as in .gitignore
    ("/*.md", "docs/x.md", False),  # a leading slash anchors at the project root
    ("*.md", "*.py", False),
    ("*.md", "README.md", True),
    ("docs/*.md", "docs/api/x.md", False),  # `*` stays inside one part
    ("docs/**/*.md", "docs/api/x.md", True),
    ("docs/**/*.md", "docs/x.md", True),  # `**` is zero parts too
    ("src/auth", "src/auth/login.py", True),  # a plain name covers what is below it
    ("src/auth/", "src/auth/login.py", True),
    ("src/auth", "src/authz/x.py", False),
    ("src/*.py", "src/**/test_*.py", True),
    ("src/a?.py", "src/ab.py", True),
    ("src/a?.py", "src/abc.py", False),
    ("src/**", "docs/**", False),
    ("**", "anything/at/all", True),
    ("a/*/c", "a/b/*", True),
    ("a/*/c", "a/b/d", False),
    ("Makefile", "tools/Makefile", True),
    ("/Makefile", "tools/Makefile", False),
])
def test_overlap_matrix(first, second, overlapping):
    found = overlap(first, second)
    assert (found is not None) == overlapping, found
    assert (overlap(second, first) is not None) == overlapping
    if found is not None:
        assert covers(first, found) and covers(second, found), found


@pytest.mark.parametrize("bad", ["", "  ", "../x", "a/../../b", "src/[ab].py", "src/{a,b}.py", "a\\b", "x\x00y", "/"])
def test_a_pattern_that_names_no_project_file_is_refused_in_one_sentence(bad):
    with pytest.raises(InvalidInput) as caught:
        normalize(bad)
    assert "\n" not in caught.value.message


def test_normalizing_keeps_the_meaning():
    assert normalize("./src//auth/") == "src/auth"
    assert normalize("src/**/**/x") == "src/**/x"
    assert normalize("/README.md") == "/README.md"


# -- properties ------------------------------------------------------------------------------------

PART = st.sampled_from(["a", "b", "ab", "*", "?", "a*", "*b", "**", "a?"])
PATTERN = st.lists(PART, min_size=1, max_size=4).map("/".join) | st.lists(PART, min_size=1, max_size=3).map(lambda p: "/" + "/".join(p))
NAME = st.sampled_from(["a", "b", "ab", "ba", "aab", "x"])
PATH = st.lists(NAME, min_size=1, max_size=5).map("/".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PATTERN, PATTERN)
def test_a_shared_path_found_is_covered_by_both_and_overlap_is_symmetric(first, second):
    found = overlap(first, second)
    if found is not None:
        assert covers(first, found) and covers(second, found)
    assert (found is None) == (overlap(second, first) is None)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PATTERN, PATTERN, st.lists(PATH, min_size=1, max_size=20))
def test_when_some_path_is_covered_by_both_the_patterns_overlap(first, second, paths):
    for path in paths:
        if covers(first, path) and covers(second, path):
            assert overlap(first, second) is not None, path
            break


@settings(max_examples=200, deadline=None)
@given(PATTERN, PATH)
def test_a_pattern_overlaps_a_plain_path_exactly_when_it_covers_it_or_what_is_below_it(pattern, path):
    # a plain path anchored at the root (no wildcard) covers itself and what is below it
    expected = covers(pattern, path) or overlap(pattern, f"/{path}/**") is not None
    assert (overlap(pattern, "/" + path) is not None) == expected


@settings(max_examples=300, deadline=None)
@given(PATTERN, PATH)
def test_every_path_a_pattern_covers_starts_with_its_literal_prefix(pattern, path):
    from rooms_cli.reservations.patterns import literal_prefix

    if covers(pattern, path):
        assert path.startswith(literal_prefix(pattern))
