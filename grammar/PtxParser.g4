// PTX syntax as nvcc 13 emits it and the PTX ISA 9.0 defines it. Instructions stay generic (opcode token,
// operand list): per-opcode knowledge lives in ptx/include/ptxforge/ptx/OpcodeTable.def. The parser builds no
// tree: its actions call the IR builder (ptx/lib/ParseTreeToIR.cpp), so memory stays proportional to the IR.
parser grammar PtxParser;

options { tokenVocab = PtxLexer; }

@parser::header {
#include "ParseActions.h"
}

@parser::members {
ptxforge::ptx::detail::ParseActions *B = nullptr;
}

chunk : topLevel* EOF ;

topLevel
  : VERSION v=FLOAT                                        { B->version($v); }
  | TARGET t=IDENT { B->target($t); } (COMMA t2=IDENT { B->target($t2); })*
  | ADDRESS_SIZE n=INT                                     { B->addressSize($n); }
  | FILE i=INT s=STRING (COMMA a=INT COMMA b=INT)?         { B->file($FILE, $i, $s, $a, $b); }
  | SECTION n=SECTION_NAME b=SECTION_BODY                  { B->section($SECTION, $n, $b); }
  | pragma
  | ALIAS a1=IDENT COMMA a2=IDENT SEMI                     { B->alias($ALIAS, $a1, $a2); }
  | linkage* (variableDecl | function)
  ;

linkage : l=(VISIBLE | EXTERN | WEAK | COMMON)             { B->linkage($l); } ;

pragma : PRAGMA s=STRING { B->pragma($PRAGMA, $s); } (COMMA s2=STRING { B->pragmaMore($s2); })* SEMI ;

variableDecl
  : s=(REG | PARAM | LOCAL | SHARED | GLOBAL | CONST | TEX) { B->beginDecl($s); }
    attribute* varName (COMMA varName)* SEMI                { B->endDecl(); }
  ;

attribute
  : ALIGN n=INT                                            { B->align($n); }
  | t=TYPE                                                 { B->declType($t); }
  | v=VECTOR                                               { B->declVector($v); }
  | PTR                                                    { B->ptr($PTR); }
  | s=(GLOBAL | SHARED | CONST | LOCAL | PARAM)            { B->ptrSpace($s); }
  | ATTRIBUTE LPAREN a=DOT_IDENT { B->attribute($a); } (COMMA a2=DOT_IDENT { B->attribute($a2); })* RPAREN
  | d=DOT_IDENT                                            { B->unknownAttribute($d); }
  ;

varName
  : n=IDENT (LT c=INT GT)?                                 { B->declName($n, $c); }
    (LBRACK (d=INT)? RBRACK                                { B->declDim($LBRACK, $d); })*
    (EQ                                                    { B->beginInit(); }
     initializer                                           { B->endInit(); })?
  ;

initializer
  : LBRACE                                                 { B->initListBegin($LBRACE); }
    initializer (COMMA initializer)* RBRACE                { B->initListEnd(); }
  | m=MINUS? i=INT                                         { B->initInt($m, $i); }
  | m=MINUS? f=FLOAT                                       { B->initFloat($m, $f); }
  | w=IDENT LPAREN s=IDENT RPAREN (o=(PLUS | MINUS) off=INT)? { B->initSymbol($w, $s, $o, $off); }
  | s=IDENT (o=(PLUS | MINUS) off=INT)?                    { B->initSymbol(nullptr, $s, $o, $off); }
  ;

function
  : k=(ENTRY | FUNC)                                       { B->beginFunction($k); }
    (LPAREN { B->beginReturns(); } paramDecl (COMMA paramDecl)* RPAREN)?
    n=IDENT                                                { B->functionName($n); }
    (LPAREN { B->beginParams(); } (paramDecl (COMMA paramDecl)*)? RPAREN)?
    (perfDirective | pragma)*
    ( body | SEMI                                          { B->endFunction(false); } )
  ;

paramDecl
  : s=(PARAM | REG)                                        { B->beginParam($s); }
    attribute* n=IDENT                                     { B->paramName($n); }
    (LBRACK (d=INT)? RBRACK                                { B->declDim($LBRACK, $d); })*
                                                           { B->endParam(); }
  ;

perfDirective
  : p=PERF                                                 { B->perf($p); }
    (v=INT { B->perfValue($v); } (COMMA v2=INT { B->perfValue($v2); })*)?
  ;

body : LBRACE { B->beginBody(); } statement* RBRACE        { B->endFunction(true); } ;

// Rules are LL(1) where it matters: ANTLR's adaptive prediction on every statement and operand cost 15%.
statement
  : l=IDENT ( COLON                                        { B->label($l); }
            |                                              { B->beginInstruction(nullptr, nullptr, nullptr, $l); }
              instructionRest )
  | instruction
  | variableDecl
  | LBRACE { B->scopeBegin($LBRACE); } statement* RBRACE    { B->scopeEnd($RBRACE); }
  | pragma
  | LOC f=INT ln=INT col=INT                               { B->loc($LOC, $f, $ln, $col); }
    (COMMA k=IDENT a=IDENT                                 { B->locFunctionName($k, $a); }
     (COMMA k2=IDENT i1=INT i2=INT i3=INT                  { B->locInlinedAt($k2, $i1, $i2, $i3); })?)?
  | BRANCHTARGETS { B->beginTargets($BRANCHTARGETS); } targetName (COMMA targetName)* SEMI { B->endTargets(); }
  | CALLTARGETS { B->beginTargets($CALLTARGETS); } targetName (COMMA targetName)* SEMI { B->endTargets(); }
  | CALLPROTOTYPE                                          { B->beginPrototype($CALLPROTOTYPE); }
    (LPAREN { B->beginReturns(); } paramDecl RPAREN)?
    u=IDENT                                                { B->prototypeName($u); }
    LPAREN { B->beginParams(); } (paramDecl (COMMA paramDecl)*)? RPAREN
    (p=PERF { B->prototypePerf($p); })? SEMI                { B->endPrototype(); }
  ;

targetName : n=IDENT                                       { B->targetName($n); } ;

instruction
  : AT n=BANG? g=IDENT op=(OPCODE | IDENT)                 { B->beginInstruction($AT, $n, $g, $op); }
    instructionRest
  | op=OPCODE                                              { B->beginInstruction(nullptr, nullptr, nullptr, $op); }
    instructionRest
  ;

instructionRest : (operand (COMMA operand)*)? SEMI        { B->endInstruction($SEMI); } ;

operand
  : r=IDENT (PIPE r2=IDENT)?                               { B->operandName(nullptr, $r, $r2); }
  | p=BANG r=IDENT                                         { B->operandName($p, $r, nullptr); }
  | m=MINUS ( r=IDENT                                      { B->operandName($m, $r, nullptr); }
            | i=INT                                        { B->operandInt($m, $i); }
            | f=FLOAT                                      { B->operandFloat($m, $f); } )
  | i=INT                                                  { B->operandInt(nullptr, $i); }
  | f=FLOAT                                                { B->operandFloat(nullptr, $f); }
  | LBRACK                                                 { B->groupBegin($LBRACK); }
    address (COMMA operand)* RBRACK                        { B->groupEnd($RBRACK); }
  | LBRACE                                                 { B->groupBegin($LBRACE); }
    operand (COMMA operand)* RBRACE                        { B->groupEnd($RBRACE); }
  | LPAREN                                                 { B->groupBegin($LPAREN); }
    (operand (COMMA operand)*)? RPAREN                     { B->groupEnd($RPAREN); }
  ;

address
  : b=IDENT (p=PLUS? m=MINUS? o=INT)?                      { B->addressBase($b, $p, $m, $o); }
  | m=MINUS? o=INT                                         { B->addressBase(nullptr, nullptr, $m, $o); }
  ;
