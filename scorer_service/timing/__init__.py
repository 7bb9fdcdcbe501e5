"""Turn-taking and latency measured from the recorded audio."""
