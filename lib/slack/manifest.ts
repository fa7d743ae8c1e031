// The Slack app manifest a person pastes into Slack (api.slack.com → Your Apps → Create New App → From a
// manifest), with this Settle's own addresses filled in. Pure, so the console can show it; docs/slack.md
// shows the same manifest with an example address.

/** Slack's Web API, where the app's calls go unless an admin names a Slack-compatible server. */
export const SLACK_WEB_API = "https://slack.com/api";

export function slackAppManifest(urls: { interactivity: string; slashCommand: string }): string {
  return [
    "display_information:",
    "  name: Settle",
    "  description: Decide pending and uncertain AI-agent tool calls",
    "features:",
    "  bot_user:",
    "    display_name: Settle",
    "    always_online: true",
    "  slash_commands:",
    "    - command: /settle",
    `      url: ${urls.slashCommand}`,
    "      description: Link your Slack user to Settle",
    "      usage_hint: link CODE",
    "      should_escape: false",
    "oauth_config:",
    "  scopes:",
    "    bot:",
    "      - chat:write",
    "      - commands",
    "      - im:write",
    "settings:",
    "  interactivity:",
    "    is_enabled: true",
    `    request_url: ${urls.interactivity}`,
    "  org_deploy_enabled: false",
    "  socket_mode_enabled: false",
    "  token_rotation_enabled: false",
    "",
  ].join("\n");
}
