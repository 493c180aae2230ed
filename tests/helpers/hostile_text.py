"""Text as papers, web pages and models give it, for the escaping property tests of both report writers."""

from __future__ import annotations

from hypothesis import strategies as st

# Text as papers, web pages and models give it: every Markdown and HTML special, entities, URLs, digits.
PAPER_TEXT = st.lists(
    st.one_of(
        st.sampled_from(list("<>&;#*_`[]()!|~\\=+-.:/\"' x1\n\t")),
        st.sampled_from(
            ["&lt;", "&amp;", "&#60;", "&#x3C;", "<script>", "</p>", "<!--", "]]>", "javascript:", "http://e.org/a"]
        ),
        st.sampled_from(["www.e.org", "1. "]),
        st.characters(exclude_categories=("Cs", "Cc")),
    ),
    max_size=40,
).map("".join)
