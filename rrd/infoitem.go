package rrd

import (
	"fmt"
	"math"
	"strconv"
)

// InfoType is the type of an rrd_info_r item's value (rrd_info_type_t).
type InfoType int

// The types of rrd_info_r's values.
const (
	InfoVal  InfoType = 0 // RD_I_VAL, a double
	InfoCnt  InfoType = 1 // RD_I_CNT, an unsigned long
	InfoStr  InfoType = 2 // RD_I_STR
	InfoInt  InfoType = 3 // RD_I_INT
	InfoBlob InfoType = 4 // RD_I_BLO, of which only the size is kept
)

// InfoItem is one item of rrd_info_r's list: its key, type and value.
type InfoItem struct {
	Key  string
	Type InfoType
	Val  float64
	Cnt  uint64 // InfoCnt, and a blob's size
	Int  int64
	Str  string
}

// Format formats the value as rrdcached's INFO does.
func (it InfoItem) Format() string {
	switch it.Type {
	case InfoVal:
		if math.IsNaN(it.Val) {
			return "NaN"
		}
		return fmt.Sprintf("%0.10e", it.Val)
	case InfoCnt, InfoBlob:
		return strconv.FormatUint(it.Cnt, 10)
	case InfoStr:
		return it.Str
	case InfoInt:
		return strconv.FormatInt(it.Int, 10)
	}
	return ""
}
