package geo

import "strings"

// isoCodes are the ISO 3166-1 alpha-2 codes assigned today (249, as
// Debian's iso-codes 4.15 lists them), and XK (Kosovo: user-assigned, used
// by MaxMind, DB-IP and the RIRs' data). Other codes the databases carry
// are unknown (""): "??", "ZZ", "XX", the regions EU and AP, and codes no
// longer assigned (AN, CS, SU); UK is read as GB (an exceptionally
// reserved code, in some registries' data).
const isoCodes = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
	"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
	"KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ " +
	"NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
	"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
	"UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW XK"

// countries maps a two-letter code (index (c0-'A')*26 + c1-'A') to its
// interned string, "" for a code that is not a country.
var countries = func() (t [26 * 26]string) {
	for _, c := range strings.Fields(isoCodes) {
		t[int(c[0]-'A')*26+int(c[1]-'A')] = c
	}
	t[int('U'-'A')*26+int('K'-'A')] = "GB"
	return t
}()

// Country returns the interned upper-case code for a two-letter country
// code in either case ("us", "US": "US"), or "" when s is not the code of
// a country (see isoCodes). It allocates nothing.
func Country[T ~string | ~[]byte](s T) string {
	if len(s) != 2 {
		return ""
	}
	a, b := s[0]&^0x20, s[1]&^0x20 // ASCII upper case
	if a < 'A' || a > 'Z' || b < 'A' || b > 'Z' {
		return ""
	}
	return countries[int(a-'A')*26+int(b-'A')]
}

// countryIndex returns the index in countries of a country code (as
// Country reads it) and whether it is a country.
func countryIndex(s []byte) (uint16, bool) {
	c := Country(s)
	if c == "" {
		return 0, false
	}
	return uint16(int(c[0]-'A')*26 + int(c[1]-'A')), true
}
