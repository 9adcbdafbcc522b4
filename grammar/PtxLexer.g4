// PTX tokens. The production lexer is the hand-written ptx/lib/TokenSource.cpp (6x faster than an ANTLR lexer);
// this grammar defines the token vocabulary the parser uses and serves as the reference that the hand lexer
// is tested against (tests/unit/ptx/LexerTest.cpp compares both on the whole corpus).
lexer grammar PtxLexer;

// Directives that shape the grammar. Any other `.word` is a TYPE, a VECTOR or a DOT_IDENT.
VERSION: '.version';
TARGET: '.target';
ADDRESS_SIZE: '.address_size';
VISIBLE: '.visible';
EXTERN: '.extern';
WEAK: '.weak';
COMMON: '.common';
ENTRY: '.entry';
FUNC: '.func';
ALIAS: '.alias';
REG: '.reg';
PARAM: '.param';
LOCAL: '.local';
SHARED: '.shared';
GLOBAL: '.global';
CONST: '.const';
TEX: '.tex';
ALIGN: '.align';
PTR: '.ptr';
ATTRIBUTE: '.attribute';
FILE: '.file';
LOC: '.loc';
SECTION: '.section' -> pushMode(SECTION_MODE);
PRAGMA: '.pragma';
CALLPROTOTYPE: '.callprototype';
CALLTARGETS: '.calltargets';
BRANCHTARGETS: '.branchtargets';
PERF: '.maxntid' | '.reqntid' | '.minnctapersm' | '.maxnctapersm' | '.maxnreg' | '.maxclusterrank'
    | '.reqnctapercluster' | '.explicitcluster' | '.noreturn' | '.blocksareclusters';
TYPE: '.' ( 'pred' | 'b1' | 'b8' | 'b16' | 'b32' | 'b64' | 'b128' | 'u4' | 'u8' | 'u16' | 'u32' | 'u64'
    | 's4' | 's8' | 's16' | 's32' | 's64' | 'f16' | 'bf16' | 'tf32' | 'f32' | 'f64' | 'e4m3' | 'e5m2' | 'e2m3'
    | 'e3m2' | 'e2m1' | 'ue8m0' | 'f16x2' | 'bf16x2' | 'e4m3x2' | 'e5m2x2' | 'e2m3x2' | 'e3m2x2' | 'e2m1x2'
    | 'ue8m0x2' | 's16x2' | 'u16x2' | 'texref' | 'samplerref' | 'surfref' );
VECTOR: '.v2' | '.v4' | '.v8' | '.v16';
DOT_IDENT: '.' [a-zA-Z_] [a-zA-Z0-9_$]*;

// An opcode with its modifiers is one token: `ld.global.nc.v4.f32`, `cp.async.bulk.shared::cluster.global`.
OPCODE: [a-zA-Z_] [a-zA-Z0-9_]* ( '.' [a-zA-Z0-9_:]+ )+;
// Registers (with an optional `.x`-style component or a video byte/half selector such as `.b3210`), labels,
// symbols, opcodes without modifiers.
IDENT: '%' [a-zA-Z0-9_$]+ ( '.' [a-z] DIGIT* )? | [a-zA-Z_$] [a-zA-Z0-9_$]*;

FLOAT: '0' [fF] HEX HEX HEX HEX HEX HEX HEX HEX
     | '0' [dD] HEX HEX HEX HEX HEX HEX HEX HEX HEX HEX HEX HEX HEX HEX HEX HEX
     | DIGIT+ '.' DIGIT* EXPONENT?
     | DIGIT+ EXPONENT;
INT: ( '0' [xX] HEX+ | '0' [bB] [01]+ | DIGIT+ ) 'U'?;
STRING: '"' ( ~["\\\r\n] | '\\' ~[\r\n] )* '"';

LBRACE: '{';
RBRACE: '}';
LPAREN: '(';
RPAREN: ')';
LBRACK: '[';
RBRACK: ']';
LT: '<';
GT: '>';
COMMA: ',';
SEMI: ';';
COLON: ':';
AT: '@';
BANG: '!';
PLUS: '+';
MINUS: '-';
PIPE: '|';
EQ: '=';
// Operators of constant expressions (`(1+2)*3`, `[%rd+4*8]`); '|', '<', '>', '!', '+' and '-' are above.
STAR: '*';
SLASH: '/';
PERCENT: '%';
AMP: '&';
CARET: '^';
TILDE: '~';
QUESTION: '?';
SHL: '<<';
SHR: '>>';
LE: '<=';
GE: '>=';
EQEQ: '==';
NE: '!=';
ANDAND: '&&';
OROR: '||';

WS: [ \t\r\n\f]+ -> skip;
LINE_COMMENT: '//' ~[\n]* -> skip;
BLOCK_COMMENT: '/*' .*? '*/' -> skip;
// Anything else (non-ASCII bytes, NUL, stray punctuation) is one error token the parser reports.
ERROR_CHAR: .;

fragment HEX: [0-9a-fA-F];
fragment DIGIT: [0-9];
fragment EXPONENT: [eE] [+-]? DIGIT+;

// `.section .debug_xxx { ... }` bodies are DWARF data PTX passes through: kept verbatim, never parsed.
mode SECTION_MODE;
SECTION_WS: [ \t\r\n\f]+ -> skip;
SECTION_NAME: '.' [a-zA-Z_] [a-zA-Z0-9_$.]*;
SECTION_BODY: '{' ~[}]* '}' -> popMode;
SECTION_ERROR: . -> type(ERROR_CHAR), popMode;
