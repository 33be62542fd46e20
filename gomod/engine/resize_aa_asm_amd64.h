// Shared by the antialias horizontal pass's assembly loops, aaHRowsZ (resize_aa_vnni_amd64.s) and
// aaHRowsY (resize_aa_avx2_amd64.s). The offsets mirror Go structs; TestAAAsmLayout checks each
// against unsafe.Offsetof / Sizeof.

// aaAsmCol (resize_aa.go)
#define COL_OFF 0
#define COL_STEPS 4
#define COL_TAIL 8
#define COL_W 12
#define COL_SH 16
#define COL_BASE 20
#define COL_THRM1 24
#define COL_SIZE 28

// aaZConst (resize_aa_vnni_amd64.go)
#define ZK_IDX0 0
#define ZK_IDX1 64
#define ZK_REGROUP 128
#define ZK_TAIL 192
#define ZK_HALF 256
#define ZK_FRAC 260

// aaWide (resize_aa.go): hiA at 0
#define WIDE_HIB 32
#define WIDE_LOA 64
#define WIDE_LOB 96

// aaHRowsY's list of columns in doubt (its frame): entries (aaYFixCap)
#define YFIX_CAP 256

// aaVPairs' layout (resize_aa.go): one tap pair's bytes, its low halves' offset
#define VPAIR_SIZE 128
#define VPAIR_LO 64

// aaVConst (resize_aa_avx2_amd64.go)
#define VK_SH 0
#define VK_BASE 4
#define VK_FRAC 8
#define VK_THRM1 12
#define VK_TOP 16
#define VK_FIX 20
#define VK_SCALE 24
#define VK_MEAN 36
#define VK_STD 48

// aaYConst (resize_aa_avx2_amd64.go)
#define YK_SHA 0
#define YK_SHB 32
#define YK_TA 64
#define YK_TB 96
#define YK_REGROUP 128
#define YK_HALF 160
#define YK_FRAC 164

// The four source rows' pointers into R8-R11 and the column table into SI.
#define AA_ROWS4 \
	MOVQ rows+0(FP), AX; MOVQ 0(AX), R8; MOVQ 8(AX), R9; MOVQ 16(AX), R10; MOVQ 24(AX), R11; \
	MOVQ cols+16(FP), SI

// A column's share of the prefetch (to L2) of the bytes the next call reads: two lines from pf on,
// then pf moves pfn bytes on. A burst of a block's share at its start stalled on the prefetches
// themselves (perf: ~6% of aaHRowsZ's samples).
// PF and PFN: the kernel's pf and pfn arguments.
#define AA_PREFETCH(PF, PFN) \
	MOVQ PF, BX; PREFETCHT1 (BX); PREFETCHT1 64(BX); ADDQ PFN, BX; MOVQ BX, PF

// The column's doubt (ZF clear: some lane in doubt) shifted into R12's bits: column k of the block
// ends at bit 15-k.
#define AA_MARK \
	SETNE BX; MOVBQZX BX, BX; LEAQ (BX)(R12*2), R12

// The lowest marked column of the block (SI past its last column) taken off R12: its bit in CX, its
// aaAsmCol at DX, its first tap's offset in AX, its steps in BX, its low-half weights at DI (the
// column's weight index times 1<<SHIFT bytes from w, plus lodelta).
#define AA_FIXCOL(SHIFT) \
	BSFQ R12, CX; BTRQ CX, R12; \
	LEAQ 1(CX), DX; IMULQ $COL_SIZE, DX; NEGQ DX; ADDQ SI, DX; \
	MOVLQSX COL_OFF(DX), AX; MOVL COL_STEPS(DX), BX; \
	MOVLQSX COL_W(DX), DI; SHLQ $SHIFT, DI; ADDQ w+32(FP), DI; ADDQ lodelta+48(FP), DI

// The scratch slot of the column whose bit is CX, into BX.
#define AA_SLOT \
	MOVQ $15, BX; SUBQ CX, BX; SHLQ $6, BX; ADDQ scratch+64(FP), BX
