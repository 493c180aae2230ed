"""A document's blocks joined into one text and cut into passages along its structure.

A passage never crosses a section or a page: the citation ``[3, Results]`` or ``[5, p. 7]`` must hold for
all of its text. Within one section and page, consecutive blocks are packed up to ``MAX_CHARS``; a block
longer than that is cut at sentence ends (a sentence longer still at a space). ``MAX_CHARS`` is about
what the embedding model reads (all-MiniLM-L6-v2 and bge-small read 256 and 512 word pieces; a word
piece is about 4 characters of English), so no passage is embedded only in part.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence

from deepcritical.documents.model import Block, Passage
from deepcritical.text import sentence_starts

MAX_CHARS = 1000
BLOCK_SEPARATOR = "\n\n"


def joined(blocks: Sequence[Block]) -> tuple[str, list[int]]:
    """The document's text (blocks separated by a blank line) and each block's start offset."""
    starts: list[int] = []
    position = 0
    for block in blocks:
        starts.append(position)
        position += len(block.text) + len(BLOCK_SEPARATOR)
    return BLOCK_SEPARATOR.join(block.text for block in blocks), starts


def _pieces(text: str, limit: int) -> Iterator[tuple[int, int]]:
    """(start, end) spans of ``text`` no longer than ``limit``, cut at sentence ends, else at spaces."""
    cuts = sentence_starts(text)
    start = 0
    while len(text) - start > limit:
        # The last sentence end within reach, found by bisection: a scan of every cut for every piece took a
        # 46 MB record hours (its passages times its sentences).
        at = bisect.bisect_right(cuts, start + limit) - 1
        if at >= 0 and cuts[at] > start:
            end = cuts[at]
        else:
            space = text.rfind(" ", start + 1, start + limit)
            end = space + 1 if space > start else start + limit
        yield start, end
        start = end
    if start < len(text):
        yield start, len(text)


def text_passages(text: str, max_chars: int = MAX_CHARS) -> Iterator[tuple[int, int]]:
    """(start, end) spans of a text with no structure (a corpus record's text) cut as a block is: at most
    ``max_chars``, at sentence ends, else at spaces; without surrounding whitespace, none empty."""
    for start, end in _pieces(text, max_chars):
        start, end = _trimmed(text, start, end)
        if end > start:
            yield start, end


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without surrounding whitespace, so a passage's text equals the text at its offsets."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def split(document_id: str, blocks: Sequence[Block], max_chars: int = MAX_CHARS) -> tuple[str, list[Passage]]:
    """The document's text and its passages, in order; every passage's text is ``text[start:end]``."""
    text, starts = joined(blocks)
    spans: list[tuple[int, int, Block]] = []  # (start, end, the first block) per passage
    for block, block_start in zip(blocks, starts, strict=True):
        for piece_start, piece_end in _pieces(block.text, max_chars):
            start, end = block_start + piece_start, block_start + piece_end
            if spans:
                last_start, _, first = spans[-1]
                same_place = (first.section, first.subsection, first.page, first.kind) == (
                    block.section,
                    block.subsection,
                    block.page,
                    block.kind,
                )
                if same_place and end - last_start <= max_chars:
                    spans[-1] = (last_start, end, first)
                    continue
            spans.append((start, end, block))
    passages: list[Passage] = []
    for start, end, block in spans:
        start, end = _trimmed(text, start, end)
        if start == end:
            continue
        passages.append(
            Passage(
                document_id=document_id,
                index=len(passages),
                text=text[start:end],
                start=start,
                end=end,
                section=block.section,
                subsection=block.subsection,
                page=block.page,
                kind=block.kind,
            )
        )
    return text, passages
