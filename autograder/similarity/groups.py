"""Near-identical submissions as groups: one row per set of students who handed in
the same code, however many they are.

Two students are linked when their pair is flagged; a group is a connected set
of linked students (a solution passed round a class links every copy to the
others). Students whose files are the same once names, comments, layout and
order are set aside count as one submission from the start (:func:`distinct`),
so a class with 25 copies of one file compares that file once.
"""
import dataclasses

from autograder.similarity import fingerprints


@dataclasses.dataclass
class Pair:
    """Two distinct submissions (``a``, ``b``: their first students) and how they match."""
    a: str
    b: str
    similarity_a: float
    similarity_b: float
    overlap: int

    @property
    def score(self):
        return max(self.similarity_a, self.similarity_b)


@dataclasses.dataclass
class Group:
    members: list          # every student in it, sorted
    pairs: list            # its flagged pairs (empty: one submission handed in by all)
    own: int = 0           # filtered characters of its own code, for a group of one submission

    @property
    def score(self):
        return max((pair.score for pair in self.pairs), default=1.0)

    @property
    def lowest(self):
        return min((pair.score for pair in self.pairs), default=1.0)

    @property
    def overlap(self):
        return max((pair.overlap for pair in self.pairs), default=self.own)

    @property
    def identical(self):
        return not self.pairs

    def strongest(self):
        """The flagged pair to read first: the highest score, then the most code."""
        return max(self.pairs, key=lambda pair: (pair.score, pair.overlap, pair.b, pair.a), default=None)


def distinct(texts):
    """``{first student: [students]}``: students whose modules have the same canonical
    filtered code (names, comments, layout and order aside) form one submission."""
    found = {}
    for student in sorted(texts):
        found.setdefault(fingerprints.same_code_key(texts[student]), []).append(student)
    return {members[0]: members for members in found.values()}


def linked(submissions, flagged_pairs, own_sizes, min_overlap):
    """The groups: ``submissions`` ({first student: students}) joined by ``flagged_pairs``;
    a submission handed in by several students is a group on its own when it holds at
    least ``min_overlap`` filtered characters of its own (``own_sizes``: first student ->)."""
    parent = {first: first for first in submissions}

    def root(first):
        while parent[first] != first:
            parent[first] = parent[parent[first]]
            first = parent[first]
        return first

    for pair in flagged_pairs:
        parent[root(pair.a)] = root(pair.b)
    firsts, inside = {}, {}
    for first in submissions:
        firsts.setdefault(root(first), []).append(first)
    for pair in flagged_pairs:
        inside.setdefault(root(pair.a), []).append(pair)
    groups = []
    for top, joined in firsts.items():
        members = sorted(student for first in joined for student in submissions[first])
        pairs = inside.get(top, [])
        if pairs:
            groups.append(Group(members, pairs))
        elif len(members) > 1 and own_sizes.get(joined[0], 0) >= min_overlap:
            groups.append(Group(members, [], own_sizes[joined[0]]))
    groups.sort(key=lambda group: (-group.score, -len(group.members), group.members))
    return groups
