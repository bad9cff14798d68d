"""The state rules of the dashboard. Read this first.

1. **One value.** Everything the user chose that changes a number or what a
   page shows is one frozen :class:`~dashboard.settings.Settings`, kept in
   ``st.session_state["settings"]``. Only this module reads or writes it, and
   only this module touches the session-state keys of widgets that show a
   setting. Pages and the sidebar call the functions below.
2. **From the link, once.** On a session's first run the settings come from
   the URL's query parameters (:meth:`Settings.from_query`). A parameter that
   is unknown or invalid is refused: the default is used and a note is shown
   in the sidebar, never a traceback.
3. **Widgets show settings.** A widget that shows a setting is drawn with
   :func:`choice`, :func:`pair`, :func:`value`, :func:`multi` or
   :func:`editor`: its default comes from the settings, and the value it
   returns becomes the setting. Two widgets showing one setting (an outcome
   value's slider and its exact box) call :func:`adopt` before either is
   drawn: the one the user moved gives the setting, the other is told. A
   setting that follows a default (the best model, a range from ω) is None
   while the widget shows that default, so a link follows it too. A
   widget's key is known to the page that draws it and to this module, to
   no one else.
4. **Everything else asks.** A page button, a preset, the cost-matrix
   editor, an imported policy: they call :func:`request` (from a widget
   callback: in force on the rerun that follows) or :func:`change_now` (from
   a page's body: it reruns at once). The widgets that show the changed
   settings are redrawn from the new value, on every page, in the sidebar
   and in the URL, until the user changes it again.
5. **The URL mirrors the settings** on every run (:func:`write_url`), so a
   link reproduces what its sender sees. Uploaded files are not part of a
   link: a link to uploads says so.
6. **Files and statuses.** The uploaded run files (:func:`uploads`,
   :func:`take_uploads`, :func:`remove_upload`) and the Export page's restore
   status (:func:`restore_status`, :func:`set_restore_status`) live in the
   session too, and are reached only through the functions below:
   ``tests/app/test_state_owner.py`` fails when another module of the app names
   the session state.
7. **Derived, not stored.** What follows from the settings and the loaded
   runs (the models actually selected, the splits actually used, the values
   in force) is resolved by the sidebar on each run into a
   :class:`Selection`; pages read it with :func:`current`. The numbers come
   from one pipeline (``valuecore.Pipeline``, cached by
   :class:`dashboard.data.Workspace`), the same one the export and the
   command line use.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import streamlit as st

import valuecore as vc
from valuecore import UseCase, ValueMatrix

from .safetext import md_text
from .settings import CALIBRATION_METHODS, QUERY_KEYS, Settings

__all__ = [
    "CALIBRATION_METHODS",
    "Selection",
    "Settings",
    "adopt",
    "change_now",
    "choice",
    "choice_or_flag",
    "clear_restore_status",
    "clear_session",
    "current",
    "editor",
    "editor_key",
    "from_widget",
    "get",
    "init",
    "link_notes",
    "multi",
    "note_link_once",
    "pair",
    "publish",
    "remove_upload",
    "replaced_uploads",
    "request",
    "restore_status",
    "restored_document",
    "set_restore_status",
    "stop_unless_models",
    "take_uploads",
    "uploader_key",
    "uploads",
    "widest",
    "value",
    "widget_value",
    "write_url",
]

SETTINGS_KEY = "settings"
SELECTION_KEY = "selection"
LINK_NOTES_KEY = "link_notes"


# --------------------------------------------------------------- settings
def init() -> Settings:
    """The settings of this session, read from the URL on its first run."""
    settings = st.session_state.get(SETTINGS_KEY)
    if settings is None:
        params = {key: st.query_params.get_all(key) for key in st.query_params}
        settings, notes = Settings.from_query(params)
        st.session_state[SETTINGS_KEY] = settings
        st.session_state[LINK_NOTES_KEY] = notes
    return settings


def note_link_once(notes: list[str]) -> None:
    """Add what the link named but the loaded runs lack (checked once, when runs are first loaded)."""
    if st.session_state.get("_link_checked"):
        return
    st.session_state["_link_checked"] = True
    st.session_state[LINK_NOTES_KEY] = link_notes() + list(notes)


def get() -> Settings:
    """The settings in force."""
    return init()


def link_notes() -> list[str]:
    """What the link asked for and could not have (shown in the sidebar)."""
    return list(st.session_state.get(LINK_NOTES_KEY, ()))


def _store(settings: Settings) -> None:
    st.session_state[SETTINGS_KEY] = settings
    write_url(settings)


# The settings the sidebar draws outside the fragment that holds the values and the page (app.py): a change to
# one of them from inside that fragment (a page's button, an imported policy) must rerun the whole app, or the
# sidebar would go on showing the old one.
OUTSIDE_THE_FRAGMENT = frozenset({"source", "models", "tune_split", "eval_split", "calibration", "currency"})
APP_RERUN_KEY = "_app_rerun_needed"


def request(**changes: Any) -> Settings:
    """Change settings from outside their widgets (a button, a preset, an import).

    Call it from a widget callback: the change is in force on the rerun that
    follows, where every widget showing a changed setting is drawn from the
    new value. From a page's body use :func:`change_now`.
    """
    old = get()
    new = replace(old, **changes)
    if any(getattr(old, name) != getattr(new, name) for name in OUTSIDE_THE_FRAGMENT & changes.keys()):
        st.session_state[APP_RERUN_KEY] = True
    _store(new)  # the widgets showing it are told on the next run, before they are drawn (see _show)
    return new


def app_rerun_needed() -> bool:
    """Whether a setting drawn outside the values-and-page fragment changed since the last full run."""
    return bool(st.session_state.get(APP_RERUN_KEY))


def app_rerun_done() -> None:
    """Called at the start of each full run: it draws every setting."""
    st.session_state.pop(APP_RERUN_KEY, None)


def change_now(**changes: Any) -> None:
    """:func:`request`, then rerun at once (for changes made in a page's body)."""
    request(**changes)
    st.rerun()


def from_widget(name: str, widget_value: Any) -> None:
    """Store what a widget drawn by hand (not with the helpers below) shows for setting ``name``."""
    settings = get()
    if getattr(settings, name) != widget_value:
        _store(replace(settings, **{name: widget_value}))


# ---------------------------------------------------------------- widgets
def _show(key: str, wanted: Any, means: Callable, setting: Any) -> None:
    """Make widget ``key`` show ``wanted`` (what setting ``setting`` looks like) unless the user just changed it.

    A browser keeps its own copy of each widget's value and sends it back on
    every rerun: a widget whose setting changed elsewhere (a button, an
    import, another page, a default that moved) must be told its new value
    through the session state, before it is drawn, or the browser's old copy
    comes back. What the user has just changed in the widget (it differs from
    what was shown last) is left alone: it becomes the setting.
    """
    shown_key = f"_shown::{key}"
    if key not in st.session_state or shown_key not in st.session_state:
        return
    value = st.session_state[key]
    if _same(value, st.session_state[shown_key]) and not _same(means(value), setting):
        st.session_state[key] = wanted


def _shown(key: str, value: Any) -> None:
    st.session_state[f"_shown::{key}"] = value


def _same(a: Any, b: Any) -> bool:
    try:
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return tuple(a) == tuple(b)
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def choice(draw: Callable, name: str, label: str, options, *, key: str, fallback: int = 0, default: Any = None,
           means: Callable | None = None, **kwargs) -> Any:
    """A selectbox or radio showing setting ``name``; the option picked becomes the setting.

    When the setting is not among ``options`` (another data set, a stale
    link), option ``fallback`` is shown and becomes the setting. With a
    ``default`` option (e.g. the best model), the setting None shows it and
    picking it stores None: a link then follows the default instead of
    freezing today's. ``means(picked)`` gives the setting an option stands for, when an option stands for
    more than itself (the data source "folder" for the folder the setting names).
    """
    options = list(options)
    if not options:
        return None
    current = getattr(get(), name)
    if default is not None and default in options:
        fallback = options.index(default)
    index = options.index(current) if current in options else min(fallback, len(options) - 1)
    stands_for = means or (lambda picked: picked)

    def setting_of(picked):
        return None if default is not None and picked == default else stands_for(picked)

    _show(key, options[index], setting_of, current)
    picked = draw(label, options, index=index, key=key, **kwargs)
    _shown(key, picked)
    from_widget(name, setting_of(picked))
    return picked


def choice_or_flag(draw: Callable, name: str, flag: str, flagged: Any, label: str, options, *, key: str,
                   **kwargs) -> Any:
    """:func:`choice` for setting ``name``, whose menu may hold one more option ``flagged`` standing for the
    boolean setting ``flag`` (the Export page's thresholds per segment beside the pages' rule).

    Picking ``flagged`` sets ``flag`` and keeps ``name`` (the other pages go on showing it); picking another
    option sets ``name`` and clears ``flag``. While ``flagged`` is not offered, ``flag`` is cleared, as a
    setting not among the options falls back in :func:`choice`.
    """
    options = list(options)
    if not options:
        return None
    settings = get()
    current = flagged if getattr(settings, flag) and flagged in options else getattr(settings, name)
    index = options.index(current) if current in options else 0
    _show(key, options[index], lambda picked: picked, current)
    picked = draw(label, options, index=index, key=key, **kwargs)
    _shown(key, picked)
    if picked != flagged:
        from_widget(name, picked)
    from_widget(flag, picked == flagged)
    return picked


def pair(draws: tuple[Callable, Callable], name: str, labels: tuple[str, str], options, *,
         keys: tuple[str, str], default: tuple | None = None, **kwargs) -> tuple:
    """Two selectboxes showing setting ``name``, a pair of options.

    The setting None shows ``default`` (e.g. the recommended model and its closest rival) when both are
    among ``options``, else the first two options; picking it stores None, so a link follows the default.
    """
    options = list(options)
    if default is None or len(set(default)) != 2 or not all(o in options for o in default):
        default = tuple(options[:2])
    default = tuple(default)
    current = getattr(get(), name) or default
    picked = []
    for draw, label, shown, fallback, key in zip(draws, labels, current, default, keys):
        index = options.index(shown) if shown in options else options.index(fallback)
        _show(key, options[index], lambda v: v, options[index])
        picked.append(draw(label, options, index=index, key=key, **kwargs))
        _shown(key, picked[-1])
    picked = tuple(picked)
    from_widget(name, None if picked == default else picked)
    return picked


def value(draw: Callable, name: str, label: str, *, key: str, default: Any = None,
          convert: Callable = lambda v: v, **kwargs) -> Any:
    """A number input, slider, toggle or checkbox showing setting ``name`` (``default`` when it is None)."""
    current = getattr(get(), name)
    wanted = default if current is None else current
    _show(key, wanted, convert, current)
    shown = draw(label, value=wanted, key=key, **kwargs)
    _shown(key, shown)
    from_widget(name, convert(shown))
    return shown


def adopt(name: str, widgets: dict[str, Callable]) -> Settings:
    """Take what the user just changed in one of the widgets showing setting ``name`` into the settings, now.

    ``widgets`` maps each widget's key to what turns its value into the setting.
    Call it before drawing any of them (and before anything that shows the
    setting, e.g. a label in the new currency): the widget the user changed
    (it differs from what was shown last) gives the setting, and the others,
    drawn afterwards with :func:`value`, are told the new value. So a slider
    and a number box showing one setting stay in step, whichever was moved.
    """
    for key, convert in widgets.items():
        shown_key = f"_shown::{key}"
        if key in st.session_state and shown_key in st.session_state:
            if not _same(st.session_state[key], st.session_state[shown_key]):
                from_widget(name, convert(st.session_state[key]))
                break
    return get()


def widest(key: str, low: float, high: float) -> tuple[float, float]:
    """The widest range asked for ``key`` in this session: a slider's range grows with the values, and never
    shrinks under the user's hand (its stops would move)."""
    memory = f"_widest::{key}"
    old_low, old_high = st.session_state.get(memory, (low, high))
    widest_range = (min(low, old_low), max(high, old_high))
    st.session_state[memory] = widest_range
    return widest_range


def multi(draw: Callable, name: str, label: str, options, *, key: str, **kwargs) -> list:
    """A multiselect showing setting ``name`` (None = every option); picking all of them stores None."""
    options = list(options)
    current = getattr(get(), name)
    default = options if current is None else [o for o in current if o in options]
    if not default:
        default = options  # none of the chosen ones is loaded (another source): select them all
    offered_key = f"_offered::{key}"
    if st.session_state.get(offered_key) != options:
        st.session_state.pop(key, None)  # other options (another source, an upload): drawn from the setting
    st.session_state[offered_key] = options

    def means(picked):
        return None if list(picked) == options else tuple(picked)

    _show(key, default, means, current)
    picked = draw(label, options, default=default, key=key, **kwargs)
    _shown(key, list(picked))
    from_widget(name, means(picked))
    return list(picked)


def show(key: str, wanted: Any) -> None:
    """Make a widget drawn by hand show ``wanted`` on this run (call it before drawing the widget)."""
    st.session_state[key] = wanted


def editor(name: str, frame, *, key: str, read: Callable, **kwargs):
    """A data editor showing setting ``name`` as ``frame``; ``read(edited frame)`` gives the setting it shows.

    The editor is keyed by the setting it shows, so a new setting (an edit,
    a link, an import) is a fresh editor; an edit reruns at once, so that the
    next edit goes to the fresh one.
    """
    current = getattr(get(), name)
    edited = st.data_editor(frame, key=editor_key(key, current), **kwargs)
    shown = read(edited)
    if shown != current:
        change_now(**{name: shown})
    return edited


def editor_key(key: str, shown: Any) -> str:
    """The widget key of the :func:`editor` with ``key`` while it shows the setting value ``shown``."""
    return f"{key}_{hashlib.sha256(repr(shown).encode()).hexdigest()[:12]}"


def widget_value(key: str, default: Any = None) -> Any:
    """What widget ``key`` holds now (in a widget's callback: the value the user just gave it)."""
    return st.session_state.get(key, default)


# ------------------------------------------------------------------ uploads
# The uploaded files in force live here, not in the drop zone: Streamlit's uploader keeps every file
# dropped on it, two of the same name included, so a corrected file could not replace its first version.
UPLOADS_KEY = "sidebar_uploaded_files"  # file name -> content, in upload order (kept across pages)
UPLOAD_NOTE_KEY = "sidebar_upload_replaced"
_UPLOADER_ROUND_KEY = "sidebar_upload_round"


def add_uploads(store: dict[str, bytes], files) -> tuple[dict[str, bytes], list[str]]:
    """``store`` with ``files`` (``(name, content)`` pairs) added; a name already there is replaced in place.

    Returns the new store and the names that replaced an earlier upload.

    >>> add_uploads({"a.csv": b"1", "b.csv": b"2"}, [("a.csv", b"3"), ("c.csv", b"4")])
    ({'a.csv': b'3', 'b.csv': b'2', 'c.csv': b'4'}, ['a.csv'])
    """
    store = dict(store)
    replaced = [name for name, _ in files if name in store]
    for name, content in files:
        store[name] = content
    return store, list(dict.fromkeys(replaced))


def uploads() -> dict[str, bytes]:
    """The uploaded run files in force: file name -> content, in upload order."""
    return dict(st.session_state.get(UPLOADS_KEY, {}))


def uploader_key() -> str:
    """The drop zone's widget key: a new one after each drop, so the zone is empty again."""
    return f"sidebar_upload_{st.session_state.get(_UPLOADER_ROUND_KEY, 0)}"


def take_uploads() -> None:
    """Move the files just dropped into the store (a name uploaded again replaces its file), and empty the zone."""
    files = st.session_state.get(uploader_key()) or []
    store, replaced = add_uploads(uploads(), [(f.name, f.getvalue()) for f in files])
    st.session_state[UPLOADS_KEY] = store
    st.session_state[UPLOAD_NOTE_KEY] = replaced
    st.session_state[_UPLOADER_ROUND_KEY] = st.session_state.get(_UPLOADER_ROUND_KEY, 0) + 1


def remove_upload(name: str) -> None:
    """Drop one uploaded file (and so its model)."""
    store = uploads()
    store.pop(name, None)
    st.session_state[UPLOADS_KEY] = store
    st.session_state[UPLOAD_NOTE_KEY] = []


def replaced_uploads() -> list[str]:
    """The files the last drop replaced (same name), among those still uploaded."""
    store = st.session_state.get(UPLOADS_KEY, {})
    return [n for n in st.session_state.get(UPLOAD_NOTE_KEY, ()) if n in store]


# ------------------------------------------------------------ restore status
RESTORE_STATUS_KEY = "export_restore_status"
RESTORED_KEY = "export_restored_document"


def restore_status() -> Any:
    """What the last import of a saved policy said (None before any, or after an empty one)."""
    return st.session_state.get(RESTORE_STATUS_KEY)


def restored_document() -> dict | None:
    """The policy document the last successful import read (as parsed JSON), or None."""
    return st.session_state.get(RESTORED_KEY)


def set_restore_status(status: Any, document: dict | None = None) -> None:
    """Record what an import said; ``document`` (a successful import) is kept to show the stored policies."""
    st.session_state[RESTORE_STATUS_KEY] = status
    if document is not None:
        st.session_state[RESTORED_KEY] = document


def clear_restore_status() -> None:
    st.session_state.pop(RESTORE_STATUS_KEY, None)


def clear_session(session) -> None:
    """Empty the state of a Streamlit session that has ended (``dashboard.memory`` frees what it held).

    It reaches Streamlit's private attribute on the session object, hence the guard: if Streamlit moves
    it, the state goes when Streamlit drops the session."""
    session_state = getattr(session, "_session_state", None)
    if hasattr(session_state, "clear"):
        session_state.clear()


# -------------------------------------------------------------------- URL
def write_url(settings: Settings) -> None:
    """Mirror the settings in the URL (only what changed, to keep reruns cheap)."""
    wanted = settings.to_query()
    params = st.query_params
    for key in [k for k in params if k in QUERY_KEYS and k not in wanted]:
        del params[key]
    changed = {key: text for key, text in wanted.items() if params.get(key) != text}
    if changed:  # one message to the browser (one history entry) however many values changed, e.g. a preset
        params.update(changed)


# -------------------------------------------------------------- selection
@dataclass(frozen=True)
class Selection:
    """What the settings mean for the loaded runs, resolved by the sidebar on each run.

    Attributes
    ----------
    settings : Settings
    report : valuecore LoadReport
        All loaded models and the problems found in their files.
    models : tuple of str
        The selected models that are loaded.
    use_case : UseCase
    value_matrix : ValueMatrix or None
        Set when the settings hold a matrix that fits the selected models' classes.
    tune_split, eval_split : str or None
        The splits chosen in the sidebar (a model lacking the tuning split is
        tuned on the evaluated one; the pipeline says so).
    calibration : str
    currency : str
    source_label : str
    notes : tuple of str
        Why a setting could not apply (shown by the pages).
    """

    settings: Settings
    report: object
    models: tuple
    use_case: UseCase
    value_matrix: ValueMatrix | None = None
    tune_split: str | None = None
    eval_split: str | None = None
    calibration: str = "none"
    currency: str = "$"
    source_label: str = ""
    notes: tuple = field(default_factory=tuple)

    @property
    def values(self) -> UseCase | ValueMatrix:
        """The value specification in force: the matrix when one is set."""
        return self.value_matrix if self.value_matrix is not None else self.use_case

    @property
    def omega(self) -> float:
        return self.use_case.omega

    @property
    def rule(self) -> str:
        return self.settings.rule

    def money(self, amount: float | None) -> str:
        """An amount in the user's currency, as everywhere (``valuecore.wording.money``)."""
        return vc.wording.money(amount, self.currency)

    def amount(self, amount: float | None) -> str:
        """An estimate or a difference per item, three significant digits (``valuecore.wording.amount``)."""
        return vc.wording.amount(amount, self.currency)

    def projected(self, amount: float | None) -> str:
        """An amount over a volume of items (a day's, a month's): no cents from 100 up (``wording.projected``)."""
        return vc.wording.projected(amount, self.currency)


def publish(selection: Selection) -> None:
    """Store the selection the sidebar resolved on this run (pages read it with :func:`current`)."""
    st.session_state[SELECTION_KEY] = selection


def current() -> Selection:
    """The selection the sidebar made on this run."""
    selection = st.session_state.get(SELECTION_KEY)
    if selection is None:
        # A path equal to a page file's name (/runs, /value) runs that file alone, without app.py and its
        # sidebar: Streamlit's folder navigation answers a session's first request before st.navigation is
        # called. The visitor is sent to the dashboard itself rather than shown a traceback.
        st.switch_page("app.py")
    return selection


def empty_source_note(report) -> str:
    """Why no model is shown: nothing chosen yet, or what went wrong with the source (markdown-safe)."""
    errors = report.errors
    if not errors:
        return "No run is loaded. Choose a data source in the sidebar."
    more = "" if len(errors) == 1 else f" (and {len(errors) - 1} more: the Runs page lists them)"
    return (f"No run is loaded: {md_text(errors[0].message.rstrip('.'))}{more}. Choose another data source in the "
            "sidebar.")


def stop_unless_models(selection: Selection) -> None:
    """Explain an empty page and stop it when no run is loaded or no model is selected."""
    if not selection.report.models:
        st.info(empty_source_note(selection.report))
        st.stop()
    if not selection.models:
        st.info("No model is selected. Pick one or more under 'Models' in the sidebar.")
        st.stop()
