/// The archive served as a Slack-compatible Web API subset.
enum SlackIndexServerModule {}
