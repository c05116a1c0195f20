"""Status subscriptions (DESIGN §16): email with double opt-in and webhooks, one message per published
incident update; the Atom feed (monitor/incidents/feed.py) needs no subscription.

addresses.py  what a subscriber may give: an email address, a public webhook URL
tokens.py     signed confirm and unsubscribe links, the server's secret (environment or database)
store.py      subscribe (rate-limited), confirm, unsubscribe; fan-out into the subscriber outbox
messages.py   the mails (monitor.mail, templates/) and the webhook bodies
outbox.py     the leader's delivery job: claims, retries, exactly one message per (subscriber, update)
web.py        POST /status/subscribe, GET /status/confirm, /status/unsubscribe (run --listen)
"""
