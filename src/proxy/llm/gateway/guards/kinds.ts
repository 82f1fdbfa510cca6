/**
 * Every guard kind this gateway knows, registered with compile.ts by importing its module. A kind
 * missing here makes a policy that uses it fail closed (500 on every request it covers).
 * One line per kind module (guards/<kind>.ts).
 */
import './regex.ts';
import './remote-kinds.ts';
