#!/usr/bin/env node
import { runFromProcess } from './main.ts'

runFromProcess()
