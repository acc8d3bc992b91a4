"""The web page of `rag serve` (rag/server/static/) in a real browser: headless Chromium driven by selenium, against
the real server started as a subprocess over the seed store.

A deep link asks and streams a cited answer; a citation chip opens the paper with the quoted sentences marked; a
follow-up is read in the context of the conversation; a reload keeps the conversation and its chips; a question
no paper answers is shown as an abstention; the server's one-line errors are shown; a server with a token asks
for it once and then answers. The page's own event reader and highlighting are also called in the browser.

RAG_SCREENSHOT=docs/screenshot.png writes the screenshot of the answered page with a paper open there (the
README's); without it the screenshot goes to the test's tmp_path.
"""

from __future__ import annotations

import json
import os
import re
import struct
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WIDTH, HEIGHT = 1280, 900
ANSWER_S = 90  # a first question on a busy 2-core machine
# Read at import: the autouse isolation fixtures clear every RAG_* variable before a test runs.
SCREENSHOT = os.environ.get("RAG_SCREENSHOT")

pytestmark = pytest.mark.skipif(
    not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()),
    reason=f"the web page's test needs Chromium and its driver ({CHROMIUM}, {CHROMEDRIVER}): "
    "apt-get install chromium chromium-driver",
)
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install '.[test]')")

from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from .serving import Server, running_server  # noqa: E402

UNLEARNING = "which papers study unlearning?"
UNANSWERABLE = "which papers study protein folding with quantum annealers?"
TOKEN = "s3cret-web-token"


# -- the server (tests/serving.py) ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(seed_store_dir) -> Iterator[Server]:
    with running_server(seed_store_dir) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument(f"--window-size={WIDTH},{HEIGHT}")
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)
    # The viewport itself WIDTH x HEIGHT (the window size includes the browser's frame): the screenshot's size.
    metrics = {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def fresh_page(driver, base: str) -> None:
    """The page at `base` with nothing remembered: no conversation (sessionStorage), no token (localStorage)."""
    driver.get(f"{base}/")
    driver.execute_script("sessionStorage.clear(); localStorage.clear();")
    driver.get(f"{base}/")  # loaded again: the first load restored whatever the storage held


# -- the page ---------------------------------------------------------------------------------------------


def open_question(driver, base: str, question: str, **params) -> None:
    driver.get(f"{base}/?{urllib.parse.urlencode({'q': question, **params})}")


def turns(driver) -> list:
    return driver.find_elements(By.CSS_SELECTOR, "#conversation .turn")


def wait_answered(driver, count: int, expect: str = "true"):
    """The `count`-th turn, once its final `answer` (or `error`) event has been rendered."""

    def done(d):
        found = d.find_elements(By.CSS_SELECTOR, "#conversation .turn[data-done]")
        return found[count - 1] if len(found) >= count else False

    try:
        turn = WebDriverWait(driver, ANSWER_S).until(done)
    except TimeoutException:
        texts = [t.text for t in turns(driver)]
        pytest.fail(f"no answer for turn {count} within {ANSWER_S} s; the page shows: {texts}")
    state = turn.get_attribute("data-done")
    assert state == expect, f"turn {count} ended {state!r}, not {expect!r}: {turn.text}"
    return turn


def chip_ids(turn) -> list[str]:
    return [chip.get_attribute("data-id") for chip in turn.find_elements(By.CSS_SELECTOR, ".answer .chip[data-id]")]


def source_ids(turn) -> list[str]:
    return [item.get_attribute("data-id") for item in turn.find_elements(By.CSS_SELECTOR, ".sources li[data-id]")]


def normalised(text: str) -> str:
    return " ".join(text.split())


def open_paper(driver, turn, paper_id: str):
    """Click the chip of `paper_id` in `turn`; the panel, once its abstract has loaded."""
    chip = turn.find_element(By.CSS_SELECTOR, f'.answer .chip[data-id="{paper_id}"]')
    # Clear of the sticky top bar: the driver clicks a chip that is in the viewport but under the bar.
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", chip)
    chip.click()
    panel = driver.find_element(By.ID, "paper-panel")
    WebDriverWait(driver, 30).until(lambda d: panel.is_displayed() and panel.find_elements(By.CSS_SELECTOR, "p mark"))
    return panel


def assert_marks_quote_the_answer(panel, answer_text: str) -> None:
    marks = [normalised(mark.text) for mark in panel.find_elements(By.CSS_SELECTOR, "mark")]
    assert any(mark and mark in normalised(answer_text) for mark in marks), (marks, answer_text)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


# -- tests ------------------------------------------------------------------------------------------------


def test_a_deep_link_streams_a_cited_answer_and_a_chip_opens_the_quoted_paper(server, browser, tmp_path):
    fresh_page(browser, server.url)
    open_question(browser, server.url, UNLEARNING)
    turn = wait_answered(browser, 1)

    assert browser.find_element(By.ID, "question").get_attribute("value") == ""
    assert "unlearning" in turn.find_element(By.CSS_SELECTOR, ".parsed-query").text
    answer = turn.find_element(By.CSS_SELECTOR, ".answer")
    chips, sources = chip_ids(turn), source_ids(turn)
    assert "001-02" in chips, answer.text  # PURGE, the unlearning paper
    assert set(chips) <= set(sources), (chips, sources)
    # Every citation became a chip: no "[001-02]" is left as text.
    assert not re.search(r"\[\s*\d{3}-\d{2}", answer.text), answer.text
    assert turn.find_elements(By.CSS_SELECTOR, ".answer li"), "the listed papers render as list items"
    assert "%" in turn.find_element(By.CSS_SELECTOR, '.sources li[data-id="001-02"]').text  # its relevance
    # Each source's bar is as long as its relevance (a `style` attribute would be blocked by the page's CSP).
    bars = browser.execute_script(
        "return [...arguments[0].querySelectorAll('.sources .score-bar')].map("
        "(bar) => bar.firstChild.getBoundingClientRect().width / bar.getBoundingClientRect().width)",
        turn,
    )
    shown = [float(s.text.rstrip("%")) / 100 for s in turn.find_elements(By.CSS_SELECTOR, ".sources .score-value")]
    assert bars == pytest.approx(shown, abs=0.02) and min(bars) < 0.9, (bars, shown)
    timings = turn.find_element(By.CSS_SELECTOR, ".timings").text
    assert "First text" in timings and "Server: retrieve" in timings, timings
    # The address bar is the question's shareable link.
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(browser.current_url).query) == {"q": [UNLEARNING]}

    # Hovering a chip says which paper it is and how well it scored.
    chip = turn.find_element(By.CSS_SELECTOR, '.answer .chip[data-id="001-02"]')
    ActionChains(browser).move_to_element(chip).perform()
    tip = browser.find_element(By.ID, "chip-tip")
    WebDriverWait(browser, 5).until(lambda d: tip.is_displayed())
    assert "001-02" in tip.text and "ICLR 2026" in tip.text and "relevance" in tip.text, tip.text

    panel = open_paper(browser, turn, "001-02")
    assert "PURGE" in panel.text
    assert "001-02" in browser.find_element(By.ID, "panel-meta").text
    assert_marks_quote_the_answer(panel, answer.text)

    shot = Path(SCREENSHOT).resolve() if SCREENSHOT else tmp_path / "screenshot.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(shot))
    assert png_size(shot) == (WIDTH, HEIGHT)

    # Escape closes the panel.
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    WebDriverWait(browser, 5).until(lambda d: not panel.is_displayed())


def test_a_follow_up_is_read_in_context_and_a_reload_keeps_the_conversation(server, browser):
    fresh_page(browser, server.url)
    open_question(browser, server.url, UNLEARNING)
    first = wait_answered(browser, 1)
    first_chips = chip_ids(first)

    box = browser.find_element(By.ID, "question")
    box.send_keys("only 2026 ones", Keys.ENTER)
    second = wait_answered(browser, 2)
    # Sent with the first turn as history: "only 2026 ones" narrows the previous question to a year.
    parsed = second.find_element(By.CSS_SELECTOR, ".parsed-query").text
    assert "unlearning" in parsed and "2026" in parsed, parsed
    assert first.find_element(By.CSS_SELECTOR, ".parsed-query").text != parsed
    second_chips = chip_ids(second)
    assert second_chips and set(second_chips) <= set(source_ids(second))
    for item in second.find_elements(By.CSS_SELECTOR, ".sources li[data-id]"):
        assert "2026" in item.text, item.text
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(browser.current_url).query) == {"q": ["only 2026 ones"]}

    # A reload renders both turns again from sessionStorage, and does not ask the URL's question again.
    browser.refresh()
    WebDriverWait(browser, 30).until(lambda d: "papers" in d.find_element(By.ID, "store-info").text)
    time.sleep(0.5)  # a deep link would have started its turn by now
    restored = turns(browser)
    assert len(restored) == 2, [t.text for t in restored]
    assert [t.get_attribute("data-done") for t in restored] == ["true", "true"]
    assert browser.find_element(By.ID, "ask").is_enabled()
    assert chip_ids(restored[0]) == first_chips and chip_ids(restored[1]) == second_chips
    assert parsed == restored[1].find_element(By.CSS_SELECTOR, ".parsed-query").text
    # The restored chips still open their paper, with the quoted sentences marked.
    panel = open_paper(browser, restored[0], "001-02")
    assert "PURGE" in panel.text
    assert_marks_quote_the_answer(panel, restored[0].find_element(By.CSS_SELECTOR, ".answer").text)
    browser.find_element(By.ID, "panel-close").click()
    WebDriverWait(browser, 5).until(lambda d: not panel.is_displayed())

    # A new conversation forgets it all, here and after a reload.
    browser.find_element(By.ID, "new-conversation").click()
    assert turns(browser) == []
    browser.refresh()
    WebDriverWait(browser, 30).until(lambda d: "papers" in d.find_element(By.ID, "store-info").text)
    assert turns(browser) == []


def test_a_question_no_paper_answers_is_shown_as_an_abstention(server, browser):
    fresh_page(browser, server.url)
    box = browser.find_element(By.ID, "question")
    box.send_keys(UNANSWERABLE, Keys.ENTER)
    turn = wait_answered(browser, 1)
    banner = turn.find_element(By.CSS_SELECTOR, ".abstained")
    assert banner.is_displayed() and "No paper in the store answers this" in banner.text
    assert "protein folding" in turn.find_element(By.CSS_SELECTOR, ".parsed-query").text
    assert chip_ids(turn) == []
    assert source_ids(turn), "the closest papers are listed"
    assert "closest papers" in turn.find_element(By.CSS_SELECTOR, ".sources-heading").text.lower()


def test_filters_come_from_the_server_and_its_errors_are_shown(server, browser):
    fresh_page(browser, server.url)
    WebDriverWait(browser, 30).until(lambda d: "95 papers" in d.find_element(By.ID, "store-info").text)
    years = [o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#year option")]
    venues = [o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#venue option")]
    assert years == ["", "2025", "2026"] and venues == ["", "ICLR 2025", "ICLR 2026"]
    assert browser.find_element(By.ID, "k").get_attribute("value") == "5"

    # Shift+Enter is a new line in the question, not a question asked.
    box = browser.find_element(By.ID, "question")
    box.send_keys("first line", Keys.SHIFT, Keys.ENTER, Keys.SHIFT, "second line")
    assert box.get_attribute("value") == "first line\nsecond line" and turns(browser) == []

    # A deep link's filters are applied; one the server refuses shows the server's one line.
    open_question(browser, server.url, UNLEARNING, year=2025, k=101)
    turn = wait_answered(browser, 1, expect="error")
    assert browser.find_element(By.ID, "year").get_attribute("value") == "2025"
    error = turn.find_element(By.CSS_SELECTOR, ".error")
    assert error.is_displayed() and "k" in error.text and "100" in error.text, error.text


def test_a_chip_links_out_to_the_paper_and_the_decision_filter_changes_the_sources(server, browser):
    fresh_page(browser, server.url)
    WebDriverWait(browser, 30).until(lambda d: "95 papers" in d.find_element(By.ID, "store-info").text)
    decisions = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#status option")]
    assert decisions == ["Any", "accepted (88)", "oral (2)", "spotlight (3)", "poster (83)"]
    areas = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#area option")]
    assert "learning theory (20)" in areas and len(areas) == 17  # "Any" and the seeds' 16 areas

    browser.find_element(By.ID, "question").send_keys(UNLEARNING, Keys.ENTER)
    turn = wait_answered(browser, 1)
    assert "001-02" in chip_ids(turn)
    # The chip opens the abstract here; beside it, a real link to the paper's page, in a new tab.
    link = turn.find_element(By.CSS_SELECTOR, '.answer .chip[data-id="001-02"] + a.chip-link')
    assert link.get_attribute("href") == "https://openreview.net/forum?id=BjWwqPE7mk"
    assert link.get_attribute("target") == "_blank" and "noopener" in link.get_attribute("rel")
    row = turn.find_element(By.CSS_SELECTOR, '.sources li[data-id="001-02"]')
    assert row.find_element(By.CSS_SELECTOR, "a.source-link").get_attribute("href") == link.get_attribute("href")
    assert "poster" in row.text  # its decision, beside year and venue
    panel = open_paper(browser, turn, "001-02")
    details = browser.find_element(By.ID, "panel-details")
    assert "poster" in details.text and "alignment, fairness, safety" in details.text, details.text
    panel_link = details.find_element(By.CSS_SELECTOR, "a.panel-link")
    assert (
        panel_link.get_attribute("href") == link.get_attribute("href")
        and panel_link.get_attribute("target") == "_blank"
    )
    browser.find_element(By.ID, "panel-close").click()
    WebDriverWait(browser, 5).until(lambda d: not panel.is_displayed())

    # Choosing a decision: the next question searches only those papers.
    Select(browser.find_element(By.ID, "status")).select_by_value("oral")
    browser.find_element(By.ID, "question").send_keys(UNLEARNING, Keys.ENTER)
    filtered = wait_answered(browser, 2)
    assert set(source_ids(filtered)) == {"001-01", "001-04"}  # the seeds' two oral papers
    assert "oral" in filtered.find_element(By.CSS_SELECTOR, ".turn-filters").text
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(browser.current_url).query)["status"] == ["oral"]


MULTI_VIEW = "which papers study multi-view clustering?"
OTHER_MULTI_VIEW = {"002-05", "002-06", "004-05"}  # the seeds' multi-view clustering papers besides 000-02
CONFORMAL = {"002-02", "004-09"}  # the seeds' conformal prediction papers (evals/questions.jsonl), 2026 and 2025


def open_source(driver, turn, paper_id: str):
    """Click the source row of `paper_id` in `turn`; the panel, once its abstract has loaded."""
    row = turn.find_element(By.CSS_SELECTOR, f'.sources li[data-id="{paper_id}"] .source-open')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", row)
    row.click()
    panel = driver.find_element(By.ID, "paper-panel")
    WebDriverWait(driver, 30).until(lambda d: paper_id in d.find_element(By.ID, "panel-meta").text)
    WebDriverWait(driver, 30).until(
        lambda d: not panel.find_elements(By.CSS_SELECTOR, ".panel-abstract .panel-loading")
    )
    return panel


def papers_like_this(driver) -> list:
    """Click "Papers like this" in the open panel; the listed papers, once they came."""
    section = driver.find_element(By.ID, "panel-similar")
    driver.find_element(By.ID, "similar-button").click()
    WebDriverWait(driver, 60).until(lambda d: section.get_attribute("data-done"))
    assert section.get_attribute("data-done") == "true", section.text
    return section.find_elements(By.CSS_SELECTOR, "li.similar")


def test_papers_like_this_lists_the_closest_papers_with_their_shared_words_and_keeps_the_filters(server, browser):
    fresh_page(browser, server.url)
    open_question(browser, server.url, MULTI_VIEW)
    turn = wait_answered(browser, 1)
    panel = open_source(browser, turn, "000-02")

    items = papers_like_this(browser)
    ids = [item.get_attribute("data-id") for item in items]
    assert len(ids) == 5 and "000-02" not in ids and set(ids[:3]) == OTHER_MULTI_VIEW, ids
    for item in items:  # its label links out to its page, in a new tab; its closeness beside it
        link = item.find_element(By.CSS_SELECTOR, "a.similar-link")
        assert link.get_attribute("href").startswith("https://openreview.net/forum?id=")
        assert link.get_attribute("target") == "_blank" and "noopener" in link.get_attribute("rel")
        assert re.fullmatch(r"0\.\d\d", item.find_element(By.CSS_SELECTOR, ".similar-score").text)
    # The first overlap: a sentence of 000-02 and one of the similar paper, the words they share marked in both.
    sentences = items[0].find_elements(By.CSS_SELECTOR, ".overlap p")
    assert len(sentences) == 2 and sentences[0].text.startswith("This paper")
    for sentence in sentences:
        marked = {mark.text.lower() for mark in sentence.find_elements(By.TAG_NAME, "mark")}
        assert {"multi-view", "clustering"} <= marked, (marked, sentence.text)

    # A decision chosen in the composer applies: only spotlight papers are listed.
    Select(browser.find_element(By.ID, "status")).select_by_value("spotlight")
    spotlight = papers_like_this(browser)
    assert {item.get_attribute("data-id") for item in spotlight} == {"004-03", "004-05", "004-19"}
    assert all("spotlight" in item.find_element(By.CSS_SELECTOR, ".similar-meta").text for item in spotlight)
    assert "spotlight" in browser.find_element(By.CSS_SELECTOR, "#panel-similar h3").text.lower()

    # Clicking one's id opens it in the panel, its own "Papers like this" not yet asked.
    browser.find_element(By.CSS_SELECTOR, '#panel-similar .similar-open[data-id="004-05"]').click()
    WebDriverWait(browser, 30).until(lambda d: "004-05" in d.find_element(By.ID, "panel-meta").text)
    WebDriverWait(browser, 30).until(
        lambda d: panel.find_elements(By.CSS_SELECTOR, ".panel-abstract p:not(.panel-loading)")
    )
    assert "multi-view" in panel.find_element(By.ID, "panel-abstract").text.lower()
    assert not browser.find_element(By.ID, "panel-similar").is_displayed()
    browser.find_element(By.ID, "panel-close").click()


def year_bars(turn) -> list[tuple[int, int, float]]:
    """The count's bars: (year, papers, drawn height) each."""
    return [
        (
            int(bar.get_attribute("data-year")),
            int(bar.get_attribute("data-papers")),
            float(bar.find_element(By.TAG_NAME, "rect").get_attribute("height")),
        )
        for bar in turn.find_elements(By.CSS_SELECTOR, "svg.year-chart .year-bar")
    ]


def test_a_how_many_papers_question_is_counted_and_drawn_by_year_and_the_decision_filter_applies(server, browser):
    fresh_page(browser, server.url)
    WebDriverWait(browser, 30).until(lambda d: "95 papers" in d.find_element(By.ID, "store-info").text)
    question = "how many papers use conformal prediction?"
    browser.find_element(By.ID, "question").send_keys(question, Keys.ENTER)
    turn = wait_answered(browser, 1)
    assert "2 papers on" in turn.find_element(By.CSS_SELECTOR, ".count-headline").text
    assert "conformal prediction" in turn.find_element(By.CSS_SELECTOR, ".parsed-query").text
    (y2025, n2025, h2025), (y2026, n2026, h2026) = year_bars(turn)
    assert (y2025, n2025, y2026, n2026) == (2025, 1, 2026, 1) and h2026 == pytest.approx(h2025, rel=0.05)
    assert "2026: 1 paper of the store's 76" in browser.execute_script(
        "return arguments[0].querySelector('.year-bar[data-year=\"2026\"] title').textContent", turn
    )
    decisions = turn.find_elements(By.CSS_SELECTOR, ".count-facet")[0].text.split("\n")
    assert decisions[1:] == ["poster", "2"], decisions
    # The reader is told how membership is decided and how right it measured.
    assert "precision 0.50" in turn.find_element(By.CSS_SELECTOR, ".count-membership").text
    assert set(source_ids(turn)) == CONFORMAL
    panel = open_source(browser, turn, "004-09")  # a paper counted opens in the panel
    assert "relevance" in browser.find_element(By.ID, "panel-meta").text
    browser.find_element(By.ID, "panel-close").click()
    WebDriverWait(browser, 5).until(lambda d: not panel.is_displayed())

    # The decision filter: of the multi-view clustering papers, only the spotlight one is counted.
    Select(browser.find_element(By.ID, "status")).select_by_value("spotlight")
    browser.find_element(By.ID, "question").send_keys("how many papers study multi-view clustering?", Keys.ENTER)
    spotlight = wait_answered(browser, 2)
    assert "1 paper on" in spotlight.find_element(By.CSS_SELECTOR, ".count-headline").text
    assert source_ids(spotlight) == ["004-05"] and [b[:2] for b in year_bars(spotlight)] == [(2025, 1)]
    assert "spotlight" in spotlight.find_element(By.CSS_SELECTOR, ".turn-filters").text

    # Count beside Ask counts a bare topic; a reload draws the counts again.
    Select(browser.find_element(By.ID, "status")).select_by_value("")
    browser.find_element(By.ID, "question").send_keys("unlearning")
    browser.find_element(By.ID, "count").click()
    topic = wait_answered(browser, 3)
    assert "3 papers on" in topic.find_element(By.CSS_SELECTOR, ".count-headline").text
    assert [b[:2] for b in year_bars(topic)] == [(2026, 3)]
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(browser.current_url).query) == {
        "q": ["unlearning"],
        "count": ["1"],
    }
    browser.refresh()
    WebDriverWait(browser, 30).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".turn[data-done]")) == 3)
    time.sleep(0.5)  # a deep link would have started its turn by now
    assert len(turns(browser)) == 3 and [b[:2] for b in year_bars(turns(browser)[0])] == [(2025, 1), (2026, 1)]


def copy_bibtex(driver, turn, expect: str):
    """Click the turn's "Copy BibTeX"; its feedback once it starts with `expect`."""
    status = turn.find_element(By.CSS_SELECTOR, ".copy-status")
    button = turn.find_element(By.CSS_SELECTOR, "button.copy-bibtex")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    WebDriverWait(driver, 30).until(lambda d: status.text.startswith(expect))
    return status.text


def bibtex_notes(text: str) -> list[str]:
    """The paper id of each BibTeX entry (the note starts "id 001-02"), parsed by bibtexparser."""
    import bibtexparser

    entries = bibtexparser.loads(text).entries
    assert all(entry["url"].startswith("https://openreview.net/forum?id=") for entry in entries), entries
    return [entry["note"].split(";")[0].removeprefix("id ") for entry in entries]


def test_copy_bibtex_puts_the_cited_papers_on_the_clipboard_or_in_a_box_to_copy(server, browser):
    fresh_page(browser, server.url)
    open_question(browser, server.url, UNLEARNING)
    turn = wait_answered(browser, 1)
    cited = browser.execute_script("return state.turns[0].answer.citations")
    assert "001-02" in cited and len(cited) >= 2

    # A clipboard the test can read back (headless Chromium's own needs a focused window and a permission).
    browser.execute_script(
        "Object.defineProperty(navigator, 'clipboard', {configurable: true, value: "
        "{writeText: async (text) => { window.copied = text; }}})"
    )
    assert copy_bibtex(browser, turn, "Copied") == f"Copied {len(cited)} BibTeX entries"
    assert bibtex_notes(browser.execute_script("return window.copied")) == cited
    assert not turn.find_element(By.CSS_SELECTOR, ".copy-fallback").is_displayed()

    # No clipboard (a page served over plain http from another host): the entries in a box, selected, to copy.
    browser.execute_script("Object.defineProperty(navigator, 'clipboard', {configurable: true, value: undefined})")
    assert copy_bibtex(browser, turn, f"{len(cited)} BibTeX entries") == f"{len(cited)} BibTeX entries below"
    box = turn.find_element(By.CSS_SELECTOR, ".copy-fallback textarea")
    assert box.is_displayed() and bibtex_notes(box.get_attribute("value")) == cited
    selected = browser.execute_script(
        "const b = arguments[0]; return b.value.slice(b.selectionStart, b.selectionEnd)", box
    )
    assert selected == box.get_attribute("value")


def test_a_server_with_a_token_asks_for_it_once(seed_store_dir, browser):
    with running_server(seed_store_dir, RAG_SERVE_TOKEN=TOKEN) as guarded:
        fresh_page(browser, guarded.url)
        open_question(browser, guarded.url, UNLEARNING)
        failed = wait_answered(browser, 1, expect="error")
        assert "token" in failed.text
        form = browser.find_element(By.ID, "token-form")
        assert form.is_displayed()

        browser.find_element(By.ID, "token").send_keys(TOKEN, Keys.ENTER)
        # The refused question is asked again, in place of its failed turn, with the token.
        turn = wait_answered(browser, 1)
        assert len(turns(browser)) == 1 and "001-02" in chip_ids(turn)
        assert not form.is_displayed()
        assert "95 papers" in browser.find_element(By.ID, "store-info").text
        assert browser.execute_script("return localStorage.getItem('rag-papers:token')") == TOKEN
        assert "PURGE" in open_paper(browser, turn, "001-02").text  # /api/papers sends it too


def test_the_page_reads_events_split_anywhere_and_marks_a_paraphrases_passage(server, browser):
    """The page's own functions, called in the browser: the SSE reader and the panel's highlighting."""
    fresh_page(browser, server.url)
    # Two events and a keep-alive comment, with CRLF line ends, cut mid-line, mid-"\r\n" and mid-character.
    stream = (
        'event: text\r\ndata: {"text": "caf\u00e9"}\r\n\r\n: ping\r\n\r\nevent: answer\r\ndata: {"answer": {}}\r\n\r\n'
    )
    events = browser.execute_async_script(
        """
        const [text, done] = arguments;
        const bytes = new TextEncoder().encode(text);
        // 32|33 cuts "é" (2 bytes); 36|37 and 38|39 cut the "\\r\\n"s ending the first event, 63|64 the one
        // after "event: answer" (read as two line ends, that would end the event before its data)
        const cuts = [3, 20, 33, 37, 39, 50, 64, bytes.length];
        const body = new ReadableStream({
          start(controller) {
            let from = 0;
            for (const to of cuts) { controller.enqueue(bytes.slice(from, to)); from = to; }
            controller.close();
          },
        });
        (async () => {
          const seen = [];
          for await (const event of readEvents(new Response(body))) seen.push(event);
          done(seen);
        })().catch((error) => done(String(error)));
        """,
        stream,
    )
    assert events == [{"type": "text", "data": {"text": "café"}}, {"type": "answer", "data": {"answer": {}}}]

    sentences = [
        "We study unlearning in large language models.",
        "Moreover, we propose PURGE, a method that forgets on request.",
        "It works.",
    ]
    # An extractive answer says which sentences it quoted (`answer.quoted`): the page marks those, and only those.
    snippet = {"snippet": "We study \\emph{unlearning} in large language models. It works."}
    marks = browser.execute_script("return highlighted(...arguments)", sentences, [1], snippet)
    assert marks == {"marks": [False, True, False], "why": "quoted"}
    # An LLM's answer quotes nothing the server indexed: the page marks the passage the search matched.
    for quoted in (None, []):
        marks = browser.execute_script("return highlighted(...arguments)", sentences, quoted, snippet)
        assert marks == {"marks": [True, False, False], "why": "matched"}  # "It works." is too short to count
    marks = browser.execute_script("return highlighted(...arguments)", sentences, None, {})
    assert marks == {"marks": [False, False, False], "why": "none"}


# -- other sites (rag/server/guard.py) ------------------------------------------------------------------------


@contextmanager
def other_site(page: str) -> Iterator[str]:
    """A page on another origin (another loopback port), as a site the user happens to have open."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}/"
    finally:
        site.shutdown()


def test_another_sites_page_cannot_make_the_server_answer_or_frame_it(server, browser):
    """A page on another origin posts a question as `text/plain` (a request a browser sends with no preflight) and
    frames the server's page: the server answers neither (its access log shows the refusals), and the frame stays
    empty."""
    question = json.dumps({"question": "which papers study cross-site unlearning?"})
    page = f"""<!doctype html><title>elsewhere</title>
<iframe id="frame" src="{server.url}/"></iframe>
<script>
fetch("{server.url}/api/ask", {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}},
  body: {json.dumps(question)}}}).finally(() => {{ document.title = "sent"; }});
</script>"""
    seen = len(server.stderr)
    with other_site(page) as url:
        browser.get(url)
        WebDriverWait(browser, 30).until(lambda d: d.title == "sent")
        time.sleep(0.5)  # the access log line is written once the refusal is sent
        log = "".join(server.stderr[seen:])
        assert re.search(r"POST /api/ask 4(03|15) ", log), log
        assert not re.search(r"POST /api/ask 200 ", log), log
        frame = browser.find_element(By.ID, "frame")
        browser.switch_to.frame(frame)
        try:  # a frame the server refused holds Chromium's error page, never the question box
            assert not browser.find_elements(By.ID, "question")
        finally:
            browser.switch_to.default_content()
