"""`python -m llmproxy`: the same as the `llmproxy` command."""

from llmproxy.cli import main

if __name__ == "__main__":
    main()
