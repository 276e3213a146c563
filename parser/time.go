package parser

// timeLen is the length of "10/Oct/2000:13:55:36 -0700", the Apache %t and
// nginx $time_local layout without its brackets.
const timeLen = 26

// parseTime converts "dd/Mon/yyyy:hh:mm:ss ±hhmm" (exactly timeLen bytes)
// to Unix seconds. It validates every field: English month abbreviations in
// their usual case, the day against the month's length (leap years
// included), hour < 24, minute < 60, second <= 60, zone hours < 24 and
// minutes < 60. A leap second (60) is counted as 59 so the hit stays in its
// minute. Times before 1970-01-01T00:00:00Z are rejected.
func parseTime(b []byte) (int64, bool) {
	if len(b) != timeLen || b[2] != '/' || b[6] != '/' || b[11] != ':' ||
		b[14] != ':' || b[17] != ':' || b[20] != ' ' {
		return 0, false
	}
	day := num2(b[0], b[1])
	month := monthNumber(b[3], b[4], b[5])
	year := num2(b[7], b[8])*100 + num2(b[9], b[10])
	hour := num2(b[12], b[13])
	minute := num2(b[15], b[16])
	sec := num2(b[18], b[19])
	zh := num2(b[22], b[23])
	zm := num2(b[24], b[25])
	// num2 returns a negative number for non-digits; year is then < 1970.
	if month == 0 || year < 1970 || day < 1 || day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 60 ||
		zh < 0 || zh > 23 || zm < 0 || zm > 59 {
		return 0, false
	}
	if sec == 60 {
		sec = 59
	}
	zone := zh*3600 + zm*60
	switch b[21] {
	case '+':
	case '-':
		zone = -zone
	default:
		return 0, false
	}
	t := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+sec) - int64(zone)
	if t < 0 {
		return 0, false
	}
	return t, true
}

// num2 returns the value of two ASCII digits, or a negative number if
// either is not a digit.
func num2(a, b byte) int {
	x, y := a-'0', b-'0'
	if x > 9 || y > 9 {
		return -10000
	}
	return int(x)*10 + int(y)
}

// monthNumber returns 1..12 for "Jan".."Dec", 0 otherwise.
func monthNumber(a, b, c byte) int {
	switch uint32(a)<<16 | uint32(b)<<8 | uint32(c) {
	case 'J'<<16 | 'a'<<8 | 'n':
		return 1
	case 'F'<<16 | 'e'<<8 | 'b':
		return 2
	case 'M'<<16 | 'a'<<8 | 'r':
		return 3
	case 'A'<<16 | 'p'<<8 | 'r':
		return 4
	case 'M'<<16 | 'a'<<8 | 'y':
		return 5
	case 'J'<<16 | 'u'<<8 | 'n':
		return 6
	case 'J'<<16 | 'u'<<8 | 'l':
		return 7
	case 'A'<<16 | 'u'<<8 | 'g':
		return 8
	case 'S'<<16 | 'e'<<8 | 'p':
		return 9
	case 'O'<<16 | 'c'<<8 | 't':
		return 10
	case 'N'<<16 | 'o'<<8 | 'v':
		return 11
	case 'D'<<16 | 'e'<<8 | 'c':
		return 12
	}
	return 0
}

// daysIn returns the number of days of month (1..12) in year.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the number of days from 1970-01-01 to the given
// proleptic Gregorian date, for years >= 1. Howard Hinnant's algorithm.
func daysFromCivil(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := year / 400
	yoe := year - era*400
	mp := (month + 9) % 12 // March is 0
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
