"""llmproxy inside pytest: the plugin (`llmproxy.testing.plugin`, registered through the `pytest11` entry point)
gives each test its own cassette and expectations on one proxy per process. See docs/pytest.md."""
