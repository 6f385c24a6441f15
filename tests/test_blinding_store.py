"""The model-blind masking's name trie is built once per machine and kept in the cache folder
(judge.judges.blinding.base_trie): the stored trie is the built one, a later process reads it instead
of litellm's map, and a stored file that is damaged or of other sources is never used."""

from __future__ import annotations

import json

import pytest

from judge.judges import blinding


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path))
    blinding.base_trie.cache_clear()
    blinding._trie_for.cache_clear()
    yield tmp_path
    blinding.base_trie.cache_clear()
    blinding._trie_for.cache_clear()


def stored(cache) -> list:
    return sorted((cache / "blinding").glob("base-trie-*.json"))


def test_the_trie_is_stored_once_and_read_back_as_built(cache, monkeypatch):
    built = blinding.base_trie()
    assert built == blinding._build_base_trie() and len(built) > 300
    [path] = stored(cache)
    assert json.loads(path.read_text(encoding="utf-8")) == built
    blinding.base_trie.cache_clear()
    monkeypatch.setattr(blinding, "_build_base_trie", lambda: pytest.fail("built again: the stored trie was not read"))
    assert blinding.base_trie() == built
    assert blinding.mask_names("We ran claude-3-5-sonnet and gpt-4o here") == "We ran [model] and [model] here"


DEEP = '{"a":' * 950 + '{"": true}' + "}" * 950  # read by json.loads, deeper than a check by recursion goes


@pytest.mark.parametrize("damage", ['{"gpt": {"": false}}', "[1, 2]", '{"gpt": ', "\x00" * 10, '{"a": 3}', DEEP,
                                    '{"a":' * 100_000])
def test_a_damaged_stored_trie_is_built_again_and_replaced(cache, damage):
    built = blinding.base_trie()
    [path] = stored(cache)
    path.write_text(damage, encoding="utf-8")
    blinding.base_trie.cache_clear()
    assert blinding.base_trie() == built
    assert json.loads(path.read_text(encoding="utf-8")) == built


def test_another_word_list_is_another_stored_trie(cache, monkeypatch, tmp_path_factory):
    blinding.base_trie()
    words = tmp_path_factory.mktemp("words") / "model_words.txt"
    words.write_text(blinding.WORDS_FILE.read_text(encoding="utf-8") + "mask: zorblax\n", encoding="utf-8")
    monkeypatch.setattr(blinding, "WORDS_FILE", words)
    blinding.base_trie.cache_clear()
    assert "zorblax" in blinding.base_trie()
    assert len(stored(cache)) == 2


def test_a_cache_folder_that_cannot_be_written_still_masks(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(blocked))
    blinding.base_trie.cache_clear()
    blinding._trie_for.cache_clear()
    try:
        assert blinding.mask_names("gpt-4o said so") == "[model] said so"
    finally:
        blinding.base_trie.cache_clear()
        blinding._trie_for.cache_clear()
