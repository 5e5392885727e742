#!/usr/bin/env python3
"""Reads a running `slackindex serve` with Slack's own Python SDK and prints what it got as one JSON object.

Usage: scripts/slack_sdk_client.py BASE_URL TOKEN CHANNEL THREAD_TS QUERY
  BASE_URL   e.g. http://127.0.0.1:43817/api/ (as `slackindex serve` prints it)
  CHANNEL    a conversation id to page through with conversations.history
  THREAD_TS  a thread parent in CHANNEL for conversations.replies
  QUERY      a search.messages query

The Swift test `SlackSDKClientTests` runs it and checks the numbers against the archive. Needs `pip install slack_sdk`.
"""
import json
import sys

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError


def main() -> None:
    base_url, token, channel, thread_ts, query = sys.argv[1:6]
    client = WebClient(token=token, base_url=base_url)
    out = {}

    auth = client.auth_test()  # POST, form body
    out["auth"] = {"user_id": auth["user_id"], "team_id": auth["team_id"], "url": auth["url"]}

    # The SDK follows response_metadata.next_cursor itself when a response is iterated.
    history_ts, history_pages = [], 0
    for page in client.conversations_history(channel=channel, limit=40):
        history_pages += 1
        history_ts += [m["ts"] for m in page["messages"]]
    out["history"] = {"pages": history_pages, "ts": history_ts}

    bounded = client.conversations_history(
        channel=channel, latest=history_ts[5], oldest=history_ts[9], inclusive=True, limit=100)
    out["history_bounded"] = [m["ts"] for m in bounded["messages"]]

    replies_ts, replies_pages, parents_first = [], 0, True
    for page in client.conversations_replies(channel=channel, ts=thread_ts, limit=3):
        replies_pages += 1
        messages = page["messages"]
        parents_first = parents_first and messages[0]["ts"] == thread_ts
        replies_ts += [m["ts"] for m in messages[1:]]
    out["replies"] = {"pages": replies_pages, "ts": replies_ts, "parent_first_on_every_page": parents_first}

    user_ids, user_pages = [], 0
    for page in client.users_list(limit=10):
        user_pages += 1
        user_ids += [u["id"] for u in page["members"]]
    out["users"] = {"pages": user_pages, "ids": user_ids}

    search = client.search_messages(query=query, count=100, highlight=True, sort="timestamp", sort_dir="desc")
    messages = search["messages"]
    out["search"] = {
        "total": messages["total"],
        "matches": [[m["channel"]["id"], m["ts"]] for m in messages["matches"]],
        "highlighted": sum(1 for m in messages["matches"] if "\ue000" in m["text"]),
        "paging": messages["paging"],
    }

    try:
        client.conversations_history(channel="C_DOES_NOT_EXIST")
        out["missing_channel_error"] = None
    except SlackApiError as error:
        out["missing_channel_error"] = error.response["error"]

    print(json.dumps(out))


if __name__ == "__main__":
    main()
