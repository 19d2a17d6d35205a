"""A WordPiece tokenizer trained on the corpus itself (METHODS.md §1.1), so no download is needed.

BERT's uncased recipe (``tokenizers``): Unicode normalization with lower-casing and accent
stripping, splitting on whitespace and punctuation, then WordPiece with ``##`` continuation
pieces. The vocabulary is learned like ``tokenizers``' WordPiece trainer (frequency-ranked merges
of adjacent pieces, starting from single characters) but here, because that trainer breaks ties
between equally frequent merges in hash-map order and so gives a different vocabulary on every
run: ties go to the lexicographically smallest pair, which makes training reproducible.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import BertTokenizerFast

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
PREFIX = "##"


def _merge(seq: list[str], a: str, b: str, merged: str) -> list[str]:
    out, i = [], 0
    while i < len(seq):
        if i + 1 < len(seq) and seq[i] == a and seq[i + 1] == b:
            out.append(merged)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def learn_vocab(word_counts: dict[str, int], vocab_size: int) -> list[str]:
    """Special tokens, the character alphabet, then merged pieces, most frequent merge first.

    Args:
        word_counts: pre-tokenized (normalized) words and their corpus frequencies.
        vocab_size: stop when the vocabulary has this many entries (or no pair is left).
    """
    words = sorted(word_counts)
    counts = [word_counts[w] for w in words]
    seqs = [[w[0], *(PREFIX + c for c in w[1:])] for w in words]
    vocab = [*SPECIAL_TOKENS, *sorted({piece for seq in seqs for piece in seq})]
    known = set(vocab)
    pairs: Counter[tuple[str, str]] = Counter()
    where: defaultdict[tuple[str, str], set[int]] = defaultdict(set)
    for i, seq in enumerate(seqs):
        for pair in zip(seq, seq[1:], strict=False):
            pairs[pair] += counts[i]
            where[pair].add(i)
    heap = [(-n, a, b) for (a, b), n in pairs.items()]
    heapq.heapify(heap)
    while len(vocab) < vocab_size and heap:
        neg, a, b = heapq.heappop(heap)
        if -neg <= 0:
            break
        if pairs.get((a, b), 0) != -neg:
            continue  # a stale entry: this pair's count changed since it was pushed
        merged = a + b[len(PREFIX):]
        if merged not in known:  # the same piece can be reached by two different merges
            vocab.append(merged)
            known.add(merged)
        for i in sorted(where.pop((a, b))):
            old, new = seqs[i], _merge(seqs[i], a, b, merged)
            delta = Counter(zip(new, new[1:], strict=False))
            delta.subtract(Counter(zip(old, old[1:], strict=False)))
            for pair, change in delta.items():
                if change:
                    pairs[pair] += change * counts[i]
                    where[pair].add(i)
                    heapq.heappush(heap, (-pairs[pair], *pair))
            seqs[i] = new
        del pairs[(a, b)]
    return vocab


def train_wordpiece(texts: Iterable[str], vocab_size: int, lowercase: bool = True) -> BertTokenizerFast:
    """Train a BERT-style WordPiece tokenizer on ``texts`` (deterministic).

    Args:
        texts: training documents (the corpus's training split).
        vocab_size: target vocabulary size, special tokens included (fewer when the corpus is small).
        lowercase: uncased vocabulary (BERT-uncased behaviour).

    Returns:
        A fast tokenizer whose ``[CLS] ... [SEP]`` template matches ``BertForMaskedLM`` inputs.
    """
    normalizer = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=lowercase)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    word_counts: Counter[str] = Counter()
    for text in texts:
        word_counts.update(w for w, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    vocab = learn_vocab(dict(word_counts), vocab_size)
    core = Tokenizer(models.WordPiece({piece: i for i, piece in enumerate(vocab)}, unk_token="[UNK]"))
    core.normalizer = normalizer
    core.pre_tokenizer = pre_tokenizer
    core.decoder = decoders.WordPiece(prefix=PREFIX)
    cls_id, sep_id = vocab.index("[CLS]"), vocab.index("[SEP]")
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return BertTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", do_lower_case=lowercase,
    )
