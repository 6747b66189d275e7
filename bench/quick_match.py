"""bench quick"""
