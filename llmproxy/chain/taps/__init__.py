"""The response-side taps that fill the chain's slots (`chain.RESPONSE_SIDE`)."""
