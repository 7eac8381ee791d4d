"""Multi-process deployments on PostgreSQL and Redis, started by the tests themselves."""

# A shared database refuses the demo passwords the README prints (`seed_demo`): these
# deployments choose their own, and sign in with them.
DEMO_PASSWORD = "topology-demo-pass-7"
DEMO_ENV = {
    "JAZZMINE_DEMO_PASSWORD": DEMO_PASSWORD,
    "JAZZMINE_DEMO_REVIEWER_PASSWORD": "topology-review-pass-7",
}
