#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# lint-checks.t [FILE...]
#
# `check "..." [ A ] && [ B ]` never checks B: `check` (tests/host/lib.sh and
# its copies) runs [ A ] and prints ok or not ok, and the shell then runs
# [ B ] and drops its result. The same holds for `||` and `|` after a check.
# This fails on any check command followed by &&, || or | in the shell tests
# (tests/**/*.t and *.sh, or the FILEs given), backslash continuations and
# all; write `check "..." test A -a B`, a function, or two checks instead.
#
# The scanner knows quotes, $(...), $((...)), ${...}, backquotes, comments
# and here-documents, so that an operator inside an argument of check
# ("a && b", sh -c "...", $(a || b)) is not taken for one after it. It is
# tried first on samples written both ways.
use strict;
use warnings;
use File::Find;
use FindBin;

my @pending_heredocs;	# [delimiter, strip tabs], read at the next newline
my @found;		# "line N: text" of each check followed by an operator
my $checks;		# check commands seen
my ($src, $pos, $line);

my %keyword_then_cmd = map { $_ => 1 }
	qw(if then else elif while until do ! { time);

sub peek { substr($src, $pos, $_[0] // 1) }

sub skip_heredocs {
	while (my $h = shift @pending_heredocs) {
		my ($delim, $strip) = @$h;
		while ($pos < length $src) {
			my $end = index($src, "\n", $pos);
			$end = length $src if $end < 0;
			my $l = substr($src, $pos, $end - $pos);
			$pos = $end + 1;
			$line++;
			$l =~ s/^\t+// if $strip;
			last if $l eq $delim;
		}
	}
}

sub skip_single_quoted {	# at the opening quote
	my $end = index($src, "'", $pos + 1);
	$end = length($src) - 1 if $end < 0;
	$line += () = substr($src, $pos, $end + 1 - $pos) =~ /\n/g;
	$pos = $end + 1;
}

sub skip_backquoted {
	$pos++;
	while ($pos < length $src) {
		my $c = peek;
		if ($c eq '\\') { $pos += 2; next; }
		$line++ if $c eq "\n";
		$pos++;
		return if $c eq '`';
	}
}

sub skip_double_quoted {	# at the opening quote
	$pos++;
	while ($pos < length $src) {
		my $c = peek;
		if ($c eq '\\') {
			$line++ if peek(2) eq "\\\n";
			$pos += 2;
		} elsif ($c eq '"') {
			$pos++;
			return;
		} elsif (peek(2) eq '$(') {
			$pos += 2;
			scan_code(1);
		} elsif (peek(2) eq '${') {
			skip_braced();
		} elsif ($c eq '`') {
			skip_backquoted();
		} else {
			$line++ if $c eq "\n";
			$pos++;
		}
	}
}

sub skip_braced {	# at ${
	$pos += 2;
	my $depth = 1;
	while ($pos < length $src && $depth) {
		my $c = peek;
		if ($c eq '\\') { $pos += 2; next; }
		if ($c eq "'") { skip_single_quoted(); next; }
		if ($c eq '"') { skip_double_quoted(); next; }
		if (peek(2) eq '$(') { $pos += 2; scan_code(1); next; }
		$depth++ if peek(2) eq '${';
		$depth-- if $c eq '}';
		$line++ if $c eq "\n";
		$pos++;
	}
}

# Shell code up to the end of input or, with $nested, the ')' that closes
# it. A check command lasts until ';', '&', a newline or the closing ')'.
sub scan_code {
	my ($nested) = @_;
	my $cmd_start = 1;	# the next word is a command name
	my $check_at;		# line of the check command being read
	my $check_text;
	while ($pos < length $src) {
		my $c = peek;
		my $two = peek(2);
		if ($two eq "\\\n") {	# continuation: the command goes on
			$pos += 2;
			$line++;
			next;
		}
		if ($c eq ' ' || $c eq "\t") { $pos++; next; }
		if ($c eq "\n") {
			$pos++;
			$line++;
			skip_heredocs();
			$cmd_start = 1;
			undef $check_at;
			next;
		}
		if ($c eq '#') {	# a comment: # at the start of a word
			my $end = index($src, "\n", $pos);
			$pos = $end < 0 ? length $src : $end;
			next;
		}
		if ($two eq '&&' || $two eq '||' || $c eq '|') {
			if (defined $check_at) {
				my $op = $two eq '&&' || $two eq '||' ? $two : '|';
				push @found, "line $check_at: $check_text ... $op";
				undef $check_at;
			}
			$pos += $c eq '|' && $two ne '||' ? 1 : 2;
			$cmd_start = 1;
			next;
		}
		if ($c eq ';' || $c eq '&') {
			$pos += $two eq ';;' ? 2 : 1;
			$cmd_start = 1;
			undef $check_at;
			next;
		}
		if ($c eq '(') {
			$pos++;
			scan_code(1);
			$cmd_start = 1;	# `( ... ) && x` is not check's
			next;
		}
		if ($c eq ')') {
			$pos++;
			return if $nested;
			$cmd_start = 1;	# a case pattern
			undef $check_at;
			next;
		}
		if ($two eq '<<' && peek(3) ne '<<<') {
			$pos += 2;
			my $strip = peek eq '-';
			$pos++ if $strip;
			$pos++ while peek =~ /[ \t]/;
			my $w = '';
			while ($pos < length $src && peek !~ /[\s;&|<>()]/) {
				my $d = peek;
				if ($d eq '\\') { $w .= peek(2) =~ s/^\\//r; $pos += 2; next; }
				$w .= $d unless $d eq "'" || $d eq '"';
				$pos++;
			}
			push @pending_heredocs, [$w, $strip];
			$cmd_start = 0;
			next;
		}
		# A word: read it whole, quotes and expansions included.
		my $start = $pos;
		my $plain = 1;	# no quotes or expansions in it
		while ($pos < length $src) {
			my $d = peek;
			my $d2 = peek(2);
			last if $d =~ /[ \t\n;&|()]/ || $d2 eq "\\\n";
			last if $d2 eq '<<';
			if ($d eq '\\') { $pos += 2; $plain = 0; }
			elsif ($d eq "'") { skip_single_quoted(); $plain = 0; }
			elsif ($d eq '"') { skip_double_quoted(); $plain = 0; }
			elsif ($d eq '`') { skip_backquoted(); $plain = 0; }
			elsif ($d2 eq '$(') { $pos += 2; scan_code(1); $plain = 0; }
			elsif ($d2 eq '${') { skip_braced(); $plain = 0; }
			else { $pos++; }
		}
		my $word = substr($src, $start, $pos - $start);
		if ($cmd_start) {
			if ($plain && $word eq 'check') {
				$check_at = $line;
				$checks++;
				my $end = index($src, "\n", $start);
				$check_text = substr($src, $start,
					($end < 0 ? length $src : $end) - $start);
				$check_text = substr($check_text, 0, 60);
				$cmd_start = 0;
			} elsif ($plain && $keyword_then_cmd{$word}) {
				$cmd_start = 1;
			} elsif ($plain && $word =~ /^[A-Za-z_][A-Za-z0-9_]*=/) {
				$cmd_start = 1;	# an assignment before the command
			} else {
				$cmd_start = 0;
			}
		}
		$pos++ if $pos == $start;	# never stall on a character
	}
}

sub lint {	# lint TEXT: the list of findings
	($src, $pos, $line) = ($_[0], 0, 1);
	@found = ();
	$checks = 0;
	@pending_heredocs = ();
	scan_code(0);
	return @found;
}

my $n = 0;
my $failed = 0;
sub ok {
	my ($good, $what) = @_;
	$n++;
	$failed++ unless $good;
	print(($good ? '' : 'not ') . "ok $n - $what\n");
}
sub diag { print map { "# $_\n" } @_ }

# --- the scanner on samples
my @bad = (
	qq{check "d" [ a ] && [ b ]\n},
	qq{check "d" \\\n\t[ "\${a:-0}" -gt 0 ] && [ \$((a * 2)) -gt "\${r:-0}" ]\n},
	qq{check "d" \\\n\t[ a ] ||\n\t[ b ]\n},
	qq{check "d" cmd | grep -q x\n},
	qq{if x; then check "d" [ a ] && [ b ]; fi\n},
	qq{[ -n "\$x" ] && check "d" [ a ] || true\n},
	qq{x=\$(echo 1)\ncheck "a (\$x)" \\\n\tgrep -q "y" "\$T/f" && [ 1 ]\n},
	qq{case \$x in\na) check "d" [ a ] && [ b ] ;;\nesac\n},
	qq{cat <<EOF\nx\nEOF\ncheck "d" [ a ] && [ b ]\n},
	qq{check "d" 'a && b' &&\n\t[ b ]\n},
);
my @good = (
	qq{check "a && b || c | d" [ a ]\n},
	qq{[ -n x ] && check "d" [ a ]\n},
	qq{check "d" sh -c "a && b || c"\n},
	qq{check "d" [ "\$(a && b)" = 1 ]\n},
	qq{check "d" [ \$(a || b) = 1 ]\n},
	qq{check "d" [ \$((a || b)) -eq 1 ]\n},
	qq{( check "d" true ) && echo\n},
	qq{cat <<EOF\ncheck "d" a && b\nEOF\n},
	qq{cat <<-'EOF'\n\tcheck "d" a && b\n\tEOF\n},
	qq{# check "d" a && b\n},
	qq{check "d" test a -a b\n},
	qq{check "d" [ "\${x:-&&}" = y ]\n},
	qq{echo check && true\n},
	qq{check "d" [ a ]\n[ b ] && echo\n},
	qq{check "d" [ a ]; [ b ] && echo\n},
	qq{check "d" awk 'BEGIN { exit !(a || b) }'\n},
	qq{check "d" \\\n\tpython3 - <<'PY'\nif a and b: x = 1 | 2\nPY\n[ a ] && [ b ]\n},
	qq{rechecks "d" [ a ] && [ b ]\n},
	qq{x=\$(cat <<'PY'\ncheck "d" a && b\nPY\n)\n},
);
for my $s (@bad) {
	my @f = lint($s);
	ok(@f == 1, "finds the check in: " . ($s =~ s/\n/\\n/gr));
}
for my $s (@good) {
	my @f = lint($s);
	ok(@f == 0, "lets pass: " . ($s =~ s/\n/\\n/gr));
	diag(@f);
}

# --- the tree (or the files given)
my @files = @ARGV;
unless (@files) {
	chdir "$FindBin::Bin/../.." or die "chdir: $!";
	find({ no_chdir => 1, wanted => sub {
		push @files, $_ if -f $_ && /\.(t|sh)$/;
	} }, 'tests');
	@files = sort @files;
}
my $shell = 0;
my @all;
my @lost;
for my $f (@files) {
	open(my $fh, '<', $f) or do { ok(0, "read $f: $!"); next };
	my $text = do { local $/; <$fh> };
	close $fh;
	# Shell only: a Perl or Python test has no check command.
	next if $text =~ /^#!/ && $text !~ /^#!\s*\S*\b(sh|bash|dash|ash)\b/;
	$shell++;
	push @all, map { "$f: $_" } lint($text);
	# A scanner that lost its way (a quote it misread) would see fewer
	# checks than there are lines that start with one.
	my $lines = () = $text =~ /^[ \t]*check[ \t]/mg;
	push @lost, "$f: $lines lines start with check, the scanner read $checks"
		if $checks < $lines;
}
ok($shell > 0 && !@lost, "the scanner read every check command of $shell shell files");
diag(@lost);
ok(@all == 0, "no check followed by &&, || or | in them");
diag("only the first command is the check's: write test A -a B, a " .
	"function, or two checks") if @all;
diag(@all);
print "1..$n\n";
exit($failed ? 1 : 0);
