/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dlsym(), interposed.
 *
 * glibc's dlsym looks at its return address to find its caller: RTLD_NEXT
 * means "after the caller's object" and RTLD_DEFAULT uses the caller's
 * scope. A wrapper written in C would make this library the caller, and
 * an interposer preloaded after it that asks for RTLD_NEXT would get its
 * own symbol back. So the entry point asks gs_dlsym_route() (C) where to
 * go and then jumps there with the caller's return address untouched.
 */
#if defined(__x86_64__)
	.text
	.globl	dlsym
	.type	dlsym, @function
	.p2align 4
dlsym:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp		/* keep the stack 16-byte aligned */
	.cfi_adjust_cfa_offset 8
	call	gs_dlsym_route
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	*%rax
	.cfi_endproc
	.size	dlsym, .-dlsym
#elif defined(__aarch64__)
	.text
	.globl	dlsym
	.type	dlsym, %function
	.p2align 2
dlsym:
	.cfi_startproc
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	bl	gs_dlsym_route
	mov	x16, x0
	ldp	x0, x1, [sp, #16]
	ldp	x29, x30, [sp], #32
	.cfi_def_cfa_offset 0
	br	x16
	.cfi_endproc
	.size	dlsym, .-dlsym
#else
#error "dlsym.S: add this architecture (a tail call that keeps the caller's return address)"
#endif
	.section .note.GNU-stack,"",%progbits
