// Package botclass classifies user agents into bot classes (Class), from
// public lists embedded at a pinned version, a source's own patterns and a
// few heuristics; it names each bot's crawler with its operator and
// purpose (Crawler), and gives every agent its browser, OS and device
// families (package uafamily): Agent.
//
// Caveat: a client can send any user agent. The classes say what the user
// agent declares, or looks like. A bot that sends a browser's user agent
// (most scrapers, many AI agents driving a real browser) is counted as a
// person; a person whose client sends an odd user agent can be counted as
// a bot. "people" is views minus the bot classes, not a count of humans.
//
// # Classes
//
//   - search ("search"): a search-engine crawler (Googlebot, bingbot,
//     YandexBot, Baiduspider, DuckDuckBot...).
//   - ai ("ai"): an AI crawler, assistant or agent fetcher named by
//     ai.robots.txt (GPTBot, ChatGPT-User, ClaudeBot, PerplexityBot,
//     CCBot, Bytespider, meta-externalagent...).
//   - tool ("tool"): an HTTP tool, library, monitor or health check (curl,
//     python-requests, Go-http-client, okhttp, UptimeRobot, kube-probe...).
//   - bot ("bot", Other): any other declared bot: whatever the
//     crawler-user-agents patterns match (SEO crawlers such as AhrefsBot,
//     SemrushBot, MJ12bot; link previewers such as Twitterbot, Slackbot;
//     feed fetchers, archivers, scanners).
//   - suspect ("suspect"): declares nothing but looks automated (the
//     heuristics below), or is a headless browser that says so.
//   - people ("people", Person): everything else.
//
// # Order
//
// Classify tries, in order, and the first that matches decides:
//
//  1. the source's own patterns (New's extra: config bots = [{class,
//     match}]), Go regexps matched case-insensitively, in their order;
//  2. the lists, all found in one pass: data/search.txt (search), then
//     ai.robots.txt (ai), data/tool.txt (tool), data/headless.txt
//     (suspect), crawler-user-agents (bot): a user agent several lists
//     match gets the first of these;
//  3. the suspect heuristics;
//  4. else Person.
//
// crawler-user-agents also names search engines, AI crawlers and tools; the
// specific lists come first so they win. Our short search list comes
// before ai.robots.txt, which also names search crawlers (Applebot,
// PetalBot): a search engine's crawler is "search" even when its operator
// also trains models on what it fetches (a user agent cannot say which; the
// AI-only agents such as GPTBot, ClaudeBot, Google-CloudVertexBot are
// "ai"). The order has consequences worth knowing: ai.robots.txt names
// GoogleOther, facebookexternalhit, Scrapy and ExaBot, so these are "ai"
// even when they fetch for previews or a plain scraper (and Exalead's old
// Exabot with them); a bot that names the library it uses ("LinkedInBot/1.0 (...;
// Apache-HttpClient ...)") is "tool". Headless browsers are checked before
// crawler-user-agents, which tags them browser-automation, so that they
// are "suspect" as Class says.
//
// # Lists
//
// data/VERSIONS names the repository, commit, commit date and licence of
// each upstream list; Version returns the commits. Besides the names and
// patterns, refresh.sh extracts what the lists say of each crawler (see
// Names) into ai.robots.txt/info.tsv and crawler-user-agents/tags.tsv,
// line for line with agents.txt and patterns.txt. Both are MIT-licensed;
// their LICENSE files are next to the lists. botclass/refresh.sh
// regenerates data/ from a commit (downloaded from
// raw.githubusercontent.com, or read from local clones) and reproduces the
// committed files byte for byte from the pinned commits.
//
//   - crawler-user-agents (github.com/monperrus/crawler-user-agents,
//     crawler-user-agents.json): every "pattern", kept as upstream matches
//     it: case-sensitive, anywhere in the user agent. Patterns that are
//     plain literals (nearly all, told by regexp/syntax) are matched by the
//     automaton with their case; the few real regexps are compiled and run
//     only when one of the literals any of their matches must contain (for
//     "Ahrefs(Bot|SiteAudit)": "Ahrefs") is in the user agent.
//   - ai.robots.txt (github.com/ai-robots-txt/ai.robots.txt, robots.json):
//     every agent name, matched case-insensitively (they are robots.txt
//     tokens, which RFC 9309 compares so) as a product token: not touching
//     a letter or digit, nor within a host name, path or address, so that
//     the common words among them (Code, Cursor, Operator, OpenAI, Trae)
//     match "Code/1.95" but not "code.google.com" or "Traefik". "Spider"
//     is not used (a common word: it would make "Sogou web spider" ai).
//     Names that are robots.txt tokens only (Google-Extended,
//     Applebot-Extended, Webzio-Extended, YandexAdditional) are kept: no
//     user agent carries them, so they match nothing.
//   - data/search.txt, data/tool.txt, data/headless.txt: our lists, each
//     token with its source; matched case-insensitively as whole words.
//
// # Names
//
// Agent (Rules.Agent, Cache.Agent) gives a user agent's class, its
// crawler and its families. The crawler of a bot is named by the token
// that decided its class: the first, in the agent, of the best list's
// matches (the list's token or crawler-user-agents' literal without the
// slashes and spaces at its ends: "Googlebot/" is Googlebot; a
// crawler-user-agents regexp by its required literal: "Ahrefs"). Every
// bot has a name: a bot no list names (a source's own pattern, a suspect
// by the heuristics) is "(other <class>)" ("(other tool)", "(other
// suspect)"); people have none (""). Each name has an operator ("" when
// unknown) and one purpose of a closed set (Purpose: search, ai-training,
// ai-assistant, ai-search, seo, monitor, preview, feed, archive, tool,
// other), from, in order of precedence:
//
//  1. data/crawlers.txt (ours): token, name shown, operator, purpose and
//     source for the crawlers the upstream lists say too little or the
//     wrong thing of (search engines' operators; AhrefsBot, SemrushBot,
//     MJ12bot, DotBot; previewers; monitors; facebookexternalhit, a
//     previewer ai.robots.txt lists for training). Every token there must
//     be one a list names (TestCrawlerFacts).
//  2. ai.robots.txt's "operator" (data/ai.robots.txt/info.tsv, cleaned by
//     refresh.sh) and "function", free text mapped by words: assistant,
//     agent, "on behalf" or user queries: ai-assistant (a fetch on a
//     user's behalf: ChatGPT-User, Claude-User, Perplexity-User); else
//     search: ai-search (OAI-SearchBot, PerplexityBot); else ai-training
//     (GPTBot, ClaudeBot, Bytespider, CCBot, and the data scrapers).
//  3. crawler-user-agents' "tags" (data/crawler-user-agents/tags.tsv),
//     the first of: ai-crawler: ai-training; search-engine: search; seo;
//     monitoring: monitor; social-preview: preview; feed-reader: feed;
//     archiver: archive; http-library or browser-automation: tool; else
//     (scanner, advertising, academic, none) other. It gives no
//     operator.
//  4. The list's default: search.txt search; tool.txt and headless.txt
//     tool; no operator.
//
// The crawler table is built once with the lists (about 1,700 crawlers);
// an Agent points into it, and a cache entry keeps its index (uint16) and
// the families (3 bytes) in what was the entry's padding: 32 bytes, as
// with the class alone.
//
// Rules.CrawlerNamed looks a name up in a map built with the table: what
// the counts by dimension keep is the name alone, and the query and the
// dashboard show its operator and purpose beside it. A name several lists
// give with different facts (87 of 1,613: ChatGPT-User is ai.robots.txt's
// ai-assistant and crawler-user-agents' ai-training) is the best-ranked
// list's, the crawler a user agent carrying it gets (TestAgentConsistent
// checks it on every test agent).
//
// # Suspect heuristics
//
// Applied only to user agents no list matched. Each can be wrong; none
// sees a bot that copies a current browser's user agent.
//
//   - Empty, blank or "-" (the log's placeholder): nothing declared.
//   - Shorter than 10 bytes: real browsers send 60 bytes or more, and the
//     short legitimate tools (curl/8.4.0, Wget/1.21) are in the lists.
//     A short private client (a source's own "app/1.0") needs an extra
//     pattern.
//   - No product token (a letter or digit, "/", a letter or digit, as in
//     Mozilla/5.0): browsers, libraries and apps all send one. Clients
//     that send a bare name ("Microsoft Office Existence Discovery") are
//     suspect.
//   - "Mozilla/..." with no "(platform)" comment (the bare "Mozilla/5.0"
//     of scripts): every browser sends one.
//   - An ancient browser, judged against November 2026:
//     Chrome/ major < 70 (October 2018; Windows 7/8 stopped at 109, macOS
//     10.13-10.15 at 116-128, Android 4.1-4.3 at 71 and Android 5-7 at
//     95-119, so no device people still browse with is below 70, while
//     scripts copy Chrome 41-60 user agents);
//     Firefox/ major < 60 (60 ESR, May 2018; XP and Vista stopped at 52
//     ESR and OS X 10.6-10.8 at 48, all unsupported for years);
//     Internet Explorer ≤ 10 ("MSIE n" whose real engine, Trident/t + 4
//     when given, is ≤ 10; IE ≤ 10 lost support in January 2016; IE 11
//     and the compatibility view Outlook and Office send, "MSIE 7.0" with
//     Trident/7.0, stay people).
//     Not judged: Safari and other WebKit versions (old iPads stuck on
//     iOS 9-12 are still used), Opera Presto (Opera Mini), CriOS.
//     Exempt: smart TVs, set-top boxes and consoles (Tizen, webOS,
//     SMART-TV, HbbTV, CrKey, PlayStation, Xbox, Fire TV...), whose
//     browsers keep old engines for years. Limits: Android 4.4's built-in
//     WebView (Chrome 30-33, not updatable) is suspect; a log of 2015 classifies
//     most of its browsers as suspect (they were current then): the
//     thresholds are for today's traffic and need raising as years pass.
//   - A headless or automated browser that says so (data/headless.txt:
//     HeadlessChrome, PhantomJS, Puppeteer, Playwright, Selenium, Cypress).
//
// Known false positives of the upstream lists are left as they are (fix
// them upstream, or override with a source's patterns): for example
// crawler-user-agents' "Sonic" matches the Slack desktop app
// ("... Sonic Slack_SSB/4.41").
//
// # Caveats
//
//   - A name is what the agent declares: anyone can send "Googlebot"; the
//     name says nothing of whether Google sent it (no reverse-DNS check).
//   - Names follow the lists' tokens, not products: several tokens of one
//     operator are several names (Googlebot, Storebot-Google,
//     Google-InspectionTool), and one token may cover several robots (all
//     of Yandex's robots but YandexBot are "Yandex", from the
//     yandex.com/bots URL they carry).
//   - The purposes of ai.robots.txt agents come from a word match on a
//     free-text field; a change of wording upstream can move an agent,
//     and refresh.sh's diff of info.tsv shows it. An operator who uses one
//     crawler for several purposes gets the one the lists say.
//   - A source's own pattern (config bots) gives a class, not a name: its
//     bots are "(other <class>)".
//
// # Speed
//
// All literals (about 1,800) are matched in one pass by an Aho-Corasick
// automaton (ac.go): a DFA over ASCII-folded bytes, about 14,000 states of
// 50 symbols (2.9 MB, built once in about 15 ms). Classify allocates
// nothing. A Cache (one per Parser) remembers the class, crawler and
// families of up to size user agents in two generations (a recent.Gen); a
// hit is a map lookup and allocates nothing. A miss is Classify, then,
// for people, uafamily.Parse: on the Apache log's 558 distinct agents,
// Agent costs about 1.5 times Classify alone (860 against 580 ns an
// agent), and a hit with Agent 1.1 times a hit with Class (60-75 ns;
// BenchmarkAgentMiss, BenchmarkAgentHit, on a quiet 2-core machine).
package botclass
