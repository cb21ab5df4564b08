package trace

// Time conversion.
//
// Kineto writes ts and dur as decimal microseconds: integers
// ("1665536373729077"), fractions ("6520488433299.504"), strings with
// nanosecond resolution ("1682725898236567.123") and, in principle,
// exponent forms ("1.6e15"). The importer never goes through float64: it
// reads the decimal text and computes
//
//	ns = integer part × 1000 + the first three fractional digits,
//
// then rounds half-up on the fourth fractional digit (4th digit ≥ 5 adds one
// nanosecond; later digits are ignored, which is exactly half-up rounding).
// The rounding acts on the magnitude and the sign is applied last. Values
// whose nanoseconds do not fit an int64 are reported as absurd.

const (
	maxTsUs      = 1e20                       // a ts above this many microseconds is absurd
	maxDurNs     = int64(7 * 24 * 3600 * 1e9) // HTA's largest plausible duration: 7 days
	maxInt64     = int64(^uint64(0) >> 1)
	maxExpDigits = 4 // exponents beyond ±9999 are absurd on their face
)

// timeNs converts the decimal text of a number of microseconds into
// nanoseconds. ok is false when the text is not a number; overflow is true
// when it is a number whose nanoseconds do not fit an int64.
func timeNs(b []byte) (ns int64, neg, ok, overflow bool) {
	i := 0
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	// Mantissa: digits with at most one point.
	mStart := i
	intDigits := 0
	sawPoint := false
	nDigits := 0
	for ; i < len(b); i++ {
		c := b[i]
		if c >= '0' && c <= '9' {
			nDigits++
			if !sawPoint {
				intDigits++
			}
			continue
		}
		if c == '.' && !sawPoint {
			sawPoint = true
			continue
		}
		break
	}
	mEnd := i
	if nDigits == 0 {
		return 0, neg, false, false
	}
	exp := 0
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		eStart := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if i-eStart >= maxExpDigits {
				// Huge exponent: zero or overflow, depending on sign and mantissa.
				for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
				}
				if i != len(b) {
					return 0, neg, false, false
				}
				if eneg || allZero(b[mStart:mEnd]) {
					return 0, neg, true, false
				}
				return 0, neg, true, true
			}
			exp = exp*10 + int(b[i]-'0')
		}
		if i == eStart {
			return 0, neg, false, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(b) {
		return 0, neg, false, false
	}
	// k = how many mantissa digits make the integer nanoseconds.
	k := intDigits + exp + 3
	var v int64
	taken := 0
	round := false
	for j := mStart; j < mEnd; j++ {
		c := b[j]
		if c == '.' {
			continue
		}
		d := int64(c - '0')
		if taken < k {
			if v > (maxInt64-d)/10 {
				return 0, neg, true, true
			}
			v = v*10 + d
			taken++
			continue
		}
		if taken == k {
			round = d >= 5
		}
		break
	}
	for ; taken < k; taken++ { // pad with zeros when the exponent reaches past the digits
		if v > maxInt64/10 {
			return 0, neg, true, true
		}
		v *= 10
	}
	if k < 0 {
		round = false
	}
	if round {
		if v == maxInt64 {
			return 0, neg, true, true
		}
		v++
	}
	if neg {
		v = -v
	}
	return v, neg, true, false
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c >= '1' && c <= '9' {
			return false
		}
	}
	return true
}
