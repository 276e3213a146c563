package botclass

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// realAgents are real user agents per class: each as sent by the agent
// (from the operators' documentation, crawler-user-agents' instances or
// browsers of 2025-26).
var realAgents = map[Class][]string{
	AI: {
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-SearchBot/1.0; +https://www.anthropic.com)",
		"anthropic-ai",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)",
		"CCBot/2.0 (https://commoncrawl.org/faq/)",
		"Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)",
		"meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36",
		"DuckAssistBot/1.2; (+http://duckduckgo.com/duckassistbot.html)",
		"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/137.0.7151.119 Mobile Safari/537.36 (compatible; Google-CloudVertexBot; +https://cloud.google.com/enterprise-search)",
		"cohere-ai",
		"Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/41.0.2272.96 Safari/537.36 (compatible; Diffbot/0.1; +http://www.diffbot.com)",
		"Mozilla/5.0 (compatible; YouBot (+http://www.you.com))",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; MistralAI-User/1.0; +https://docs.mistral.ai/robots)",
		"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
		"Mozilla/5.0 (compatible; GoogleOther)",
		"Mozilla/5.0 (compatible; AI2Bot/1.0; +https://allenai.org/crawler)",
		"Mozilla/5.0 (compatible; TikTokSpider; ttspider-feedback@tiktok.com)",
		"Mozilla/5.0 (compatible; Timpibot/0.8; +http://www.timpi.io)",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/128.0.0.0 Safari/537.36; Devin/1.0; +devin.ai",
	},
	Search: {
		"Mozilla/5.0 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.7390.122 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Googlebot-Image/1.0",
		"Mozilla/5.0 (compatible; Google-InspectionTool/1.0)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
		"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
		"Mozilla/5.0 (compatible; YandexImages/3.0; +http://yandex.com/bots)",
		"Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)",
		"DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)",
		"Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)",
		"Mozilla/5.0 (compatible; SeznamBot/4.0; +https://o-seznam.cz/napoveda/vyhledavani/en/seznambot-crawler/)",
		"Mozilla/5.0 (compatible; Yeti/1.1; +https://naver.me/spd)",
		"Mozilla/5.0 (compatible; Qwantbot/1.0; +https://help.qwant.com/bot/)",
		"Mozilla/5.0 (compatible; MojeekBot/0.11; +https://www.mojeek.com/bot.html)",
		"Mozilla/5.0 (compatible; coccocbot-web/1.0; +http://help.coccoc.com/searchengine)",
		"Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)",
		"Mozilla/5.0 (Windows NT 6.1; rv:68.0) Gecko/20100101 Firefox/68.0 360Spider",
		"Mozilla/5.0 (compatible; SeekportBot; +https://bot.seekport.com)",
	},
	Tool: {
		"curl/8.4.0",
		"Wget/1.21.4",
		"python-requests/2.31.0",
		"Python-urllib/3.11",
		"Python/3.12 aiohttp/3.9.1",
		"python-httpx/0.27.0",
		"Go-http-client/1.1",
		"Go-http-client/2.0",
		"okhttp/4.12.0",
		"Java/17.0.2",
		"Apache-HttpClient/4.5.14 (Java/17.0.8)",
		"libwww-perl/6.72",
		"axios/1.6.2",
		"node-fetch/1.0 (+https://github.com/bitinn/node-fetch)",
		"undici",
		"Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
		"Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 StatusCake",
		"Site24x7",
		"Datadog/Synthetics",
		"Blackbox Exporter/0.25.0",
		"kube-probe/1.30",
		"ELB-HealthChecker/2.0",
		"GoogleHC/1.0",
		"HTTPie/3.2.2",
		"PostmanRuntime/7.36.0",
		// Tool is checked before the crawler-user-agents list: LinkedIn's
		// previewer names the library it uses.
		"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
	},
	Other: {
		"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
		"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)",
		"Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)",
		"Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)",
		"Twitterbot/1.0",
		"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
		"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
		"TelegramBot (like TwitterBot)",
		"Mozilla/5.0 (compatible; Pinterestbot/1.0; +http://www.pinterest.com/bot.html)",
		"Mozilla/5.0 (compatible; DataForSeoBot/1.0; +https://dataforseo.com/dataforseo-bot)",
		"Mozilla/5.0 (compatible; BLEXBot/1.0; +http://webmeup-crawler.com/)",
		"AdsBot-Google (+http://www.google.com/adsbot.html)",
		"Mozilla/5.0 (compatible; archive.org_bot +http://www.archive.org/details/archive.org_bot)",
		"Mozilla/5.0 (compatible; Barkrowler/0.9; +https://babbar.tech/crawler)",
		"FeedBurner/1.0 (http://www.FeedBurner.com)",
		// A regexp pattern of crawler-user-agents ("(sistrix|SISTRIX) [cC]rawler").
		"Mozilla/5.0 (compatible; SISTRIX Crawler; http://crawler.sistrix.net/)",
	},
	Suspect: {
		"",
		"-",
		"  ",
		"test",
		"Mozilla/5.0",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.28 Safari/537.36",
		"Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Cypress/13.6.0 Chrome/114.0.5735.289 Electron/25.8.4 Safari/537.36",
		"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)",
		"Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1; Trident/5.0)",
		"Mozilla/5.0 (Windows NT 6.1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/41.0.2228.0 Safari/537.36",
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/58.0.3029.110 Safari/537.36",
		"Mozilla/5.0 (Windows NT 6.1; WOW64; rv:40.0) Gecko/20100101 Firefox/40.1",
		"abc def ghi jkl mno",
		"Microsoft Office Existence Discovery",
	},
	Person: {
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile Safari/537.36",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 Edg/142.0.0.0",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:145.0) Gecko/20100101 Firefox/145.0",
		"Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0",
		"Mozilla/5.0 (Android 15; Mobile; rv:145.0) Gecko/145.0 Firefox/145.0",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Safari/605.1.15",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/142.0.7444.148 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/145.0 Mobile/15E148 Safari/605.1.15",
		"Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/28.0 Chrome/130.0.0.0 Mobile Safari/537.36",
		"Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/142.0.7444.102 Mobile Safari/537.36",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36 OPR/124.0.0.0",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 YaBrowser/25.10.0.0 Safari/537.36",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 400.0.0.27.81 (iPhone15,2; iOS 18_6; en_US; en; scale=3.00; 1179x2556; 811233000)",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/530.0.0.38.108;FBBV/780000000;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/18.6;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/80]",
		"Mozilla/5.0 (Linux; Android 14; SM-A546B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/142.0.7444.102 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/530.0.0.45.74;]",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 Vivaldi/7.7",
		// An old iPad stuck on iOS 12: Safari versions are not judged.
		"Mozilla/5.0 (iPad; CPU OS 12_5_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.1.2 Mobile/15E148 Safari/604.1",
		// Windows 7's last Chrome; IE 11; Outlook's compatibility view (IE 11 engine).
		"Mozilla/5.0 (Windows NT 6.1; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/109.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko",
		"Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 10.0; WOW64; Trident/7.0; .NET4.0C; .NET4.0E; Microsoft Outlook 16.0.17928; ms-office; MSOffice 16)",
		// A 2018 Samsung TV: old engines are normal on TVs.
		"Mozilla/5.0 (SMART-TV; Linux; Tizen 4.0) AppleWebKit/538.1 (KHTML, like Gecko) Version/4.0 TV Safari/538.1 Chrome/56.0.2924.0",
		"Opera/9.80 (Android; Opera Mini/36.2.2254/119.132; U; id) Presto/2.12.423 Version/12.16",
		// Desktop apps and generic words near the AI names: not AI.
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) discord/0.0.76 Chrome/134.0.6998.179 Electron/35.1.5 Safari/537.36",
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 (via code.example.org/openai.com)",
	},
}

func TestClassifyRealAgents(t *testing.T) {
	r := Default()
	for want := Person; want < NumClasses; want++ {
		if len(realAgents[want]) < 10 {
			t.Errorf("%v: only %d agents in the table", want, len(realAgents[want]))
		}
		for _, ua := range realAgents[want] {
			if got := r.Classify([]byte(ua)); got != want {
				t.Errorf("Classify(%q) = %v, want %v", ua, got, want)
			}
		}
	}
}

// TestClassifyUpstreamInstances: every example user agent of
// crawler-user-agents is classified as some bot (each matches its own
// pattern upstream), and every ai.robots.txt name used, sent as a
// product token, is "ai".
// searchFirst are the ai.robots.txt names data/search.txt names too (or
// whose first word it names, as a robots.txt token built on it): search
// engines' crawlers, "search" since that list is checked first.
var searchFirst = map[string]struct{}{"Applebot": {}, "Applebot-Extended": {}, "PetalBot": {}}

func TestClassifyUpstreamInstances(t *testing.T) {
	r := Default()
	f, err := os.Open("testdata/crawler-user-agents-instances.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	byClass := map[Class]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		c := r.Classify(sc.Bytes())
		byClass[c]++
		if c == Person {
			t.Errorf("instance %d: Classify(%q) = person", n, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Fatalf("only %d instances", n)
	}
	t.Logf("%d crawler-user-agents instances: %v", n, byClass)

	for _, name := range strings.Split(strings.TrimSpace(aiAgents), "\n") {
		if _, skip := aiSkipped[name]; skip {
			continue
		}
		want := AI
		if _, ok := searchFirst[name]; ok {
			want = Search
		}
		for _, ua := range []string{name, "Mozilla/5.0 (compatible; " + name + "/1.0; +https://example.com/bot)"} {
			if got := r.Classify([]byte(ua)); got != want {
				t.Errorf("ai.robots.txt %q: Classify(%q) = %v, want %v", name, ua, got, want)
			}
		}
	}
}

func TestClassifyExtra(t *testing.T) {
	_, err := New([]Pattern{
		{Class: Tool, Match: `^internal-checker/`},
		{Class: Person, Match: "x"},
	})
	if err == nil || !strings.Contains(err.Error(), "bots[1].class") {
		t.Fatalf("New with a person pattern: %v, want a bots[1].class error", err)
	}
	if _, err := New([]Pattern{{Class: AI, Match: "("}}); err == nil || !strings.Contains(err.Error(), "bots[0].match") {
		t.Fatalf("New with a bad regexp: %v, want a bots[0].match error", err)
	}
	if _, err := New([]Pattern{{Class: NumClasses, Match: "x"}}); err == nil || !strings.Contains(err.Error(), "bots[0].class") {
		t.Fatalf("New with class NumClasses: %v, want a bots[0].class error", err)
	}
	r, err := New([]Pattern{
		{Class: Tool, Match: `^INTERNAL-checker/`},
		{Class: Other, Match: `GPTBot`}, // before the lists
		{Class: Suspect, Match: `Chrome/142\.`},
	})
	if err != nil {
		t.Fatal(err)
	}
	for ua, want := range map[string]Class{
		"internal-checker/1.0":                 Tool, // case-insensitive
		"x internal-checker/1.0":               Person,
		"Mozilla/5.0 (compatible; GPTBot/1.2)": Other,
		realAgents[Person][0]:                  Suspect,
		realAgents[Person][4]:                  Person,
		"curl/8.4.0":                           Tool,
	} {
		if got := r.Classify([]byte(ua)); got != want {
			t.Errorf("Classify(%q) = %v, want %v", ua, got, want)
		}
	}
}

// TestClassifyBoundaries: the whole-word and product-token rules.
func TestClassifyBoundaries(t *testing.T) {
	r := Default()
	for ua, want := range map[string]Class{
		"Traefik health check/1.0 (x)":            Person, // ai "Trae" is not in "Traefik"
		"Mozilla/5.0 (X11) Trae/1.0 agent":        AI,
		"Mozilla/5.0 (X11) Code/1.95.3 x":         AI,     // ai "Code" as a product token
		"Mozilla/5.0 (X11) see code.google.com/x": Person, // not in a host name
		"Mozilla/5.0 (X11) Xcurlx/1.0":            Person, // "curl" is not a whole word here
		"Mozilla/5.0 (X11) libcurl/8.0":           Tool,
		"Mozilla/5.0 (compatible; Baiduspider-render/2.0; +http://www.baidu.com/search/spider.html)": Search,
	} {
		if got := r.Classify([]byte(ua)); got != want {
			t.Errorf("Classify(%q) = %v, want %v", ua, got, want)
		}
	}
}

// TestClassifyConcurrent: one Rules used by several goroutines (run with
// -race), each with its own Cache, agree with a single-goroutine pass.
func TestClassifyConcurrent(t *testing.T) {
	uas := apacheAgents(t)
	r, err := New([]Pattern{{Class: Tool, Match: "feedparser"}})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]Class, len(uas))
	for i, ua := range uas {
		want[i] = r.Classify(ua)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Go(func() {
			c := NewCache(r, 64)
			for i := range uas {
				j := (i + g*2500) % len(uas)
				if got := c.Class(uas[j]); got != want[j] {
					errs <- fmt.Sprintf("goroutine %d: %q = %v, want %v", g, uas[j], got, want[j])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// apacheAgents returns the user agent (the last quoted field) of every
// line of the repository's real Apache log.
func apacheAgents(tb testing.TB) [][]byte {
	b, err := os.ReadFile("../testdata/apache_combined_real.log")
	if err != nil {
		tb.Fatal(err)
	}
	var uas [][]byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimRight(line, " \r")
		if len(line) < 2 || line[len(line)-1] != '"' {
			continue
		}
		i := bytes.LastIndexByte(line[:len(line)-1], '"')
		if i < 0 {
			continue
		}
		uas = append(uas, line[i+1:len(line)-1])
	}
	if len(uas) < 9000 {
		tb.Fatalf("only %d user agents in the Apache log", len(uas))
	}
	return uas
}

// TestApacheLogClasses logs how many lines of the Apache test log land in
// each class (and checks a few that must not move).
func TestApacheLogClasses(t *testing.T) {
	uas := apacheAgents(t)
	r := Default()
	var n [NumClasses]int
	distinct := map[string]bool{}
	for _, ua := range uas {
		n[r.Classify(ua)]++
		distinct[string(ua)] = true
	}
	var b strings.Builder
	for c := Person; c < NumClasses; c++ {
		b.WriteString(" " + c.String() + "=")
		b.WriteString(itoa(n[c]))
	}
	t.Logf("testdata/apache_combined_real.log: %d lines, %d distinct user agents:%s", len(uas), len(distinct), b.String())
	for c := Search; c < NumClasses; c++ {
		if n[c] == 0 {
			t.Errorf("no line of the Apache log is %v", c)
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
