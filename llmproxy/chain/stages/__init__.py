"""The request-side stages that fill the chain's slots (`chain.REQUEST_SIDE`)."""
