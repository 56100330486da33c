"""Options read from a dictionary (llmproxy_addons/settled_options.py) still say what the options hold: after
an update, a reset, a rollback, and for values that could be changed in place."""

import pytest
from mitmproxy.exceptions import OptionsError

from llmproxy_addons.settled_options import SettledOptions


def test_a_read_follows_every_change_of_the_option() -> None:
    opts = SettledOptions()
    assert opts.listen_port is None
    assert opts.listen_port is None  # the kept read
    opts.update(listen_port=8080)
    assert opts.listen_port == 8080
    opts.tcp_timeout = 5
    assert opts.tcp_timeout == 5
    opts.reset()
    assert opts.listen_port is None
    assert opts.tcp_timeout == 600


def test_a_rolled_back_update_reads_as_before() -> None:
    opts = SettledOptions()
    opts.update(listen_host="127.0.0.1")
    assert opts.listen_host == "127.0.0.1"

    def refused_update() -> None:  # as an addon's `configure` refuses a value: mitmproxy rolls it back
        with opts.rollback({"listen_host"}, reraise=True):
            opts.update(listen_host="::1")
            assert opts.listen_host == "::1"
            raise OptionsError("refused")

    with pytest.raises(OptionsError, match="refused"):
        refused_update()
    assert opts.listen_host == "127.0.0.1"


def test_a_list_is_a_copy_each_time() -> None:
    opts = SettledOptions()
    opts.update(allow_hosts=["a.example"])
    opts.allow_hosts.append("b.example")
    assert opts.allow_hosts == ["a.example"]


def test_an_unknown_option_is_still_an_error() -> None:
    with pytest.raises(AttributeError, match="No such option"):
        SettledOptions().no_such_option  # noqa: B018
