"""How texts are cut into pieces that no merge ever joins, so that each piece
is merged on its own and, since pieces repeat, remembered.

The cutting is found from the merges when the tokenizer file is read
(``cutting``: for Llama's, "▁" and a run of letters, a run of punctuation,
one digit or one CJK character). A few characters (a query's) are then cut by
a regular expression (``pattern``); a batch in numpy, from the group of each
code point (``group_table``, ``piece_firsts``).
"""

from __future__ import annotations

import operator
import re

import numpy

# Llama's mark for a space, which its normalizer writes.
SPACE_MARK = "\u2581"
_BYTE_TOKENS = frozenset(f"<0x{byte:02X}>" for byte in range(256))


def cutting(
    lefts: list[str], rights: list[str], unmade: list[str], byte_ids: list[int | None] | None, unk_id: int | None, fuse_unk: bool
) -> list[str] | None:
    """The groups of characters that cut a text into pieces that the merges never join, so that merging
    each piece on its own gives the ids of merging the whole; None if none does.

    Two characters side by side are never joined when no token that a merge
    makes holds them side by side. The characters that merged tokens hold side
    by side fall into a few groups (Latin letters; Cyrillic ones; punctuation,
    "_" and "\\r"; ...): a piece is a run of "▁" and then a run of one group,
    or one character of no group (a digit, a CJK character, a line end). Each
    pair that a merged token holds is checked to stay within one piece.

    That holds for characters that are tokens; one that is not becomes its
    bytes' tokens, which must then merge with nothing, or the unknown token,
    which must then not be fused with the unknown character after it, nor be
    written after the byte tokens that follow it; and with no unknown token, it
    is left out, and the characters on either side of it may merge."""
    if not (_BYTE_TOKENS.isdisjoint(lefts) and _BYTE_TOKENS.isdisjoint(rights)):
        return None
    if not ((byte_ids is not None and None not in byte_ids) or (byte_ids is None and unk_id is not None and not fuse_unk)):
        return None
    # The pairs of characters side by side in merged tokens: where each merge
    # joins its two tokens, and within those of them that no merge makes.
    pairs = set(map(operator.add, map(operator.itemgetter(-1), lefts), map(operator.itemgetter(0), rights)))
    for token in unmade:
        pairs.update(token[at : at + 2] for at in range(len(token) - 1))
    group: dict[str, str] = {}

    def root(character: str) -> str:
        while group.setdefault(character, character) != character:
            group[character] = group[group[character]]
            character = group[character]
        return character

    for first, second in pairs:
        if SPACE_MARK not in (first, second):
            group[root(first)] = root(second)
    members: dict[str, list[str]] = {}
    for character in list(group):
        members.setdefault(root(character), []).append(character)
    # The largest groups first, alike ones in the order of their characters: the
    # same pattern in every process (the groups are disjoint, so their order
    # changes no piece, but the tables file keeps the pattern's text).
    groups = sorted((sorted(chars) for chars in members.values()), key=lambda chars: (-len(chars), chars))
    found = ["".join(chars) for chars in groups]
    if any(len(pattern(found).findall(pair)) != 1 for pair in pairs):
        return None  # a merged token holds "▁" after another character
    return found


def pattern(groups: list[str]) -> re.Pattern[str]:
    """What finds the pieces of a text cut by ``groups`` (see cutting): a run
    of "▁", then a run of one group or one character of none."""
    runs = ["[" + "".join(map(re.escape, chars)) + "]+" for chars in groups]
    return re.compile(f"{SPACE_MARK}*(?:{'|'.join(runs + ['.'])})", re.DOTALL)


def group_table(groups: list[str]) -> numpy.ndarray:
    """Each character's group (see cutting) by its code point, from 1 on (0:
    none), up to the highest code point of a group and one more, for numpy
    (see piece_firsts)."""
    group_of = numpy.zeros(
        max((ord(character) for group in groups for character in group), default=0) + 2, dtype=numpy.uint8 if len(groups) < 256 else numpy.int32
    )
    for number, group in enumerate(groups, 1):
        group_of[list(map(ord, group))] = number
    return group_of


def piece_firsts(codes: numpy.ndarray, group_of: numpy.ndarray, text_firsts: numpy.ndarray) -> numpy.ndarray:
    """Where each piece starts in ``codes`` (the code points of texts laid end
    to end, ``text_firsts`` where each of those not empty starts), cut by the
    groups of ``group_of`` (see group_table): a piece starts at a run of "▁",
    or at a character that does not carry on the run of its group before it."""
    size = codes.size
    groups = group_of[numpy.minimum(codes, group_of.size - 1)]
    mark = codes == ord(SPACE_MARK)
    after_mark = numpy.zeros(size, dtype=bool)
    after_mark[1:] = mark[:-1]
    carries_on = numpy.zeros(size, dtype=bool)
    carries_on[1:] = (groups[1:] == groups[:-1]) & (groups[1:] != 0)
    # A run of marks starts a piece, which takes the character after the run
    # and the rest of that character's group's run; a run of a group (or a
    # character of none) starts one where no mark is before it.
    starts = ~after_mark & (mark | ~carries_on)
    starts[text_firsts] = True
    return numpy.flatnonzero(starts)
