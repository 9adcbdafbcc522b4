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
  | i=INT                                                  { B->exprBegin(); B->exprInt($i); }
    exprMore?                                              { B->initExpr(); }
  | f=FLOAT                                                { B->exprBegin(); B->exprFloat($f); }
    exprMore?                                              { B->initExpr(); }
  |                                                        { B->exprBegin(); }
    exprPrefixed exprMore?                                 { B->initExpr(); }
  | w=IDENT LPAREN s=IDENT RPAREN (o=signedOffset)?        { B->initSymbol($w, $s, $o.ctx != nullptr); }
  | s=IDENT (o=signedOffset)?                              { B->initSymbol(nullptr, $s, $o.ctx != nullptr); }
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

// Immediates are constant expressions, folded by the actions. A leading '(' is a call's argument list or a
// parenthesised expression: the actions tell them apart by the instruction (ParseActions::groupEnd). A plain
// literal takes no extra rule: ANTLR allocates a context per rule invocation, and operands are most of PTX.
operand
  : r=IDENT (PIPE r2=IDENT)?                               { B->operandName(nullptr, $r, $r2); }
  | p=BANG ( r=IDENT                                       { B->operandName($p, $r, nullptr); }
           |                                               { B->exprBegin(); }
             exprAtom                                      { B->exprUnary($p); }
             exprMore?                                     { B->operandExpr(); } )
  | m=MINUS ( r=IDENT                                      { B->operandName($m, $r, nullptr); }
            | i=INT                                        { B->exprBegin(); B->exprInt($i); B->exprUnary($m); }
              exprMore?                                    { B->operandExpr(); }
            | f=FLOAT                                      { B->exprBegin(); B->exprFloat($f); B->exprUnary($m); }
              exprMore?                                    { B->operandExpr(); }
            |                                              { B->exprBegin(); }
              exprPrefixed                                 { B->exprUnary($m); }
              exprMore?                                    { B->operandExpr(); } )
  | i=INT                                                  { B->exprBegin(); B->exprInt($i); }
    exprMore?                                              { B->operandExpr(); }
  | f=FLOAT                                                { B->exprBegin(); B->exprFloat($f); }
    exprMore?                                              { B->operandExpr(); }
  | u=(PLUS | TILDE)                                       { B->exprBegin(); }
    exprAtom                                               { B->exprUnary($u); }
    exprMore?                                              { B->operandExpr(); }
  | LBRACK                                                 { B->groupBegin($LBRACK); }
    address (COMMA operand)* RBRACK                        { B->groupEnd($RBRACK); }
  | LBRACE                                                 { B->groupBegin($LBRACE); }
    operand (COMMA operand)* RBRACE                        { B->groupEnd($RBRACE); }
  | l=LPAREN ( t=TYPE RPAREN                               { B->exprBegin(); }
               exprAtom                                    { B->exprCast($t); }
               exprMore?                                   { B->operandExpr(); }
             |                                             { B->groupBegin($l); }
               (operand (COMMA operand)*)? RPAREN          { B->groupEnd($RPAREN); }
               (                                           { B->exprFromOperand(); }
                exprMore                                   { B->operandExpr(); } )? )
  ;

address
  : b=IDENT ( PLUS                                         { B->exprBegin(); }
              ( i=INT                                      { B->exprInt($i); }
              | exprPrefixed )
              exprMore?                                    { B->addressBase($b, true); }
            | m=MINUS                                      { B->exprBegin(); }
              exprAtom                                     { B->exprUnary($m); }
              exprMore?                                    { B->addressBase($b, true); }
            |                                              { B->addressBase($b, false); } )
  |                                                        { B->exprBegin(); }
    exprAtom exprMore?                                     { B->addressBase(nullptr, true); }
  ;

// `+ expr` or `- expr` after a symbol: the sign applies to the first operand, so `x - 4 + 2` is x - 2.
signedOffset
  : PLUS                                                   { B->exprBegin(); }
    exprAtom exprMore?
  | m=MINUS                                                { B->exprBegin(); }
    exprAtom                                               { B->exprUnary($m); }
    exprMore?
  ;

// Constant expressions with C's operators and precedence; the actions fold them as they are parsed
// (ConstantExpression.h). The top level of an expression is closed by the action that takes its value.
constExpr :                                                { B->exprBegin(); }
    exprAtom exprMore?                                     { B->exprEnd(); } ;

exprMore
  : (b=(STAR | SLASH | PERCENT | PLUS | MINUS | SHL | SHR | LT | GT | LE | GE | EQEQ | NE | AMP | CARET | PIPE | ANDAND
       | OROR)
     { B->exprBinary($b); } exprAtom)+ exprTernary?
  | exprTernary
  ;

exprTernary : q=QUESTION { B->exprReduce(); } constExpr COLON constExpr { B->exprTernary($q); } ;

exprAtom
  : exprPrefixed
  | i=INT                                                  { B->exprInt($i); }
  | f=FLOAT                                                { B->exprFloat($f); }
  ;

exprPrefixed
  : u=(PLUS | MINUS | BANG | TILDE) exprAtom               { B->exprUnary($u); }
  | LPAREN ( t=TYPE RPAREN exprAtom                        { B->exprCast($t); }
           | constExpr RPAREN )
  ;
